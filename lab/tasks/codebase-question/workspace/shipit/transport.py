"""Sending bytes. In this copy of the project, sending is simulated."""


def send_chunk(chunk, timeout):
    if not chunk:
        raise OSError("empty chunk")
    return len(chunk)
