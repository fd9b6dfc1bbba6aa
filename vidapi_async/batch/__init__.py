"""Many upload-and-create pipelines at once: the jobs, the runner (``BatchUploader``),
the journal that makes a batch resumable, and the manifests the command line reads.
The public names are also in ``vidapi_async``."""

from ._bucket import jobs_from_bucket
from ._jobs import (
    BatchPlan,
    BatchProgress,
    JobResult,
    JobStatus,
    LeftOut,
    SubtitleSpec,
    UploadJob,
)
from ._journal import MAX_KEY_LENGTH, JobRecord, Journal, MemoryJournal, SQLiteJournal, Stage
from ._manifest import jobs_from_folder, jobs_from_manifest, jobs_from_source
from ._postgres import PostgresJournal
from ._quota import Quota
from ._runner import BatchUploader
from ._shared import Enqueued, QueueStatus, SharedBatch

__all__ = [
    "MAX_KEY_LENGTH",
    "BatchPlan",
    "BatchProgress",
    "BatchUploader",
    "Enqueued",
    "JobRecord",
    "JobResult",
    "JobStatus",
    "Journal",
    "LeftOut",
    "MemoryJournal",
    "PostgresJournal",
    "QueueStatus",
    "Quota",
    "SQLiteJournal",
    "SharedBatch",
    "Stage",
    "SubtitleSpec",
    "UploadJob",
    "jobs_from_bucket",
    "jobs_from_folder",
    "jobs_from_manifest",
    "jobs_from_source",
]
