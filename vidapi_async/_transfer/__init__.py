"""Moving bytes: the ``client.uploads`` namespace, the sending of a file (single-shot
or chunked), the sources read, local files, the upload's digest, SRT files."""
