"""The upload client: one connection's worth of settings, and the retry policy."""

from .retry import RetryPolicy
from .transport import send_chunk


class UploadClient:
    def __init__(self, policy, timeout, chunk_size):
        self.policy = policy
        self.timeout = timeout
        self.chunk_size = chunk_size

    @classmethod
    def from_settings(cls, settings):
        # "retries" counts the tries after the first one.
        attempts = settings.get("retries", 5) + 1
        return cls(
            RetryPolicy(attempts),
            timeout=settings.get("timeout", 60),
            chunk_size=settings.get("chunk_size", 4 * 1024 * 1024),
        )

    def upload(self, path):
        with open(path, "rb") as file:
            while chunk := file.read(self.chunk_size):
                self.policy.run(lambda chunk=chunk: send_chunk(chunk, self.timeout))
