"""The client's namespaces (``client.videos``, ``client.playlists``, ...): what they
share, the metadata and fields they send, the page loop they list with."""
