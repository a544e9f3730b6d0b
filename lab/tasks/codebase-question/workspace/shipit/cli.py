"""python -m shipit.cli FILE…: upload each file."""

import sys

from . import config
from .client import UploadClient


def main(paths):
    settings = config.load(config.find_config())
    client = UploadClient.from_settings(settings)
    for path in paths:
        client.upload(path)
        print(f"uploaded {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
