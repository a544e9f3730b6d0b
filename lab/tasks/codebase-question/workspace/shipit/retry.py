"""Trying again: how often, and how long to wait in between."""

import time

CEILING = 10  # attempts, whatever the settings say


class RetryPolicy:
    def __init__(self, max_attempts, backoff=0.5):
        self.max_attempts = min(max_attempts, CEILING)
        self.backoff = backoff

    def run(self, action):
        """Call `action` until it succeeds or the attempts run out; re-raise the last error."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                return action()
            except OSError:
                if attempt == self.max_attempts:
                    raise
                time.sleep(self.backoff * 2 ** (attempt - 1))
        return None
