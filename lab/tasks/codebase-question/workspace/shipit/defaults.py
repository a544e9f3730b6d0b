"""The settings shipit uses when nothing else says otherwise."""

DEFAULTS = {
    "retries": 3,
    "timeout": 30,
    "chunk_size": 8 * 1024 * 1024,
    "region": "eu-west",
}
