"""Files on a real machine: open only regular files, read them as a stream, replace them safely.

A work directory may be hostile and a model careless: a FIFO would block a read
forever, /dev/zero never ends, a symlink planted at a guessable name could redirect a
write.  These functions take a path that the caller has already resolved and checked
(chapter 1's `safe_path`), and `shown`, the path as the model wrote it, for messages.

* `read_lines` streams a page of a file, so two lines of a 1 GB log cost two lines;
  `read_text` reads a whole file for editing, up to `EDIT_LIMIT`.  Both open only
  regular files and only UTF-8 text.
* `write_text` replaces a file through a fresh temporary file and a rename: a link
  planted in the folder is never written through, the file keeps its mode and owner,
  and a file this user may not write is left alone.
* `read_at` and `write_at` read and write at a position without moving the file's
  offset, where the system has `pread`/`pwrite`, and by seeking where it has not.

Each operating-system call that not every system has is chosen by whether the `os`
module has it, never by the system's name (see README.md).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .errors import ToolError

OUTPUT_LIMIT = 30_000  # bytes of tool output the model sees (~8k tokens)
READ_BLOCK = 65_536  # bytes read at a time; the first block decides whether a file is text
COUNT_LIMIT = 50_000_000  # bytes after a page that are scanned to count the lines left
EDIT_LIMIT = 10_000_000  # bytes; larger files are edited with bash (sed, a script)

# Flags that only some systems have; 0 where a system lacks them, so `|` leaves them out.
BINARY = getattr(os, "O_BINARY", 0)  # Windows: no "\n" -> "\r\n" translation by os.write
NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX: opening a FIFO swapped in cannot hang
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX: a symlink swapped in is refused by open


# --- reading -------------------------------------------------------------------------


@dataclass
class Page:
    """Some lines of a file, read from the line asked for, and what follows them."""

    lines: list[str]  # without their line break ("\n", or the "\r\n" of a CRLF file)
    total: int | None  # lines in the whole file; None when too much follows to count
    bytes_after: int  # bytes of the file after the page
    cut: bool  # the page's one line was longer than the byte limit and was cut


def read_lines(
    target: Path, shown: str, offset: int, limit: int, max_bytes: int = OUTPUT_LIMIT
) -> Page:
    """Up to `limit` lines from line `offset`, at most `max_bytes` of them, read as a stream.

    Lines end at "\\n" only, as for `sed -n Np`, `wc -l` and editors; `splitlines()`
    would also split at \\f, \\v or U+2028 and shift every line number after them.  Only
    the first block, the lines before `offset` and the page itself are read; the lines
    after it are counted when that costs at most COUNT_LIMIT bytes of reading.
    """
    with open_regular(target, shown) as file:
        size = os.fstat(file.fileno()).st_size
        _decode(file.read(READ_BLOCK), shown, size, whole=size <= READ_BLOCK)
        file.seek(0)
        skipped = _skip_lines(file, offset - 1)
        lines, cut = _take_lines(file, limit, max_bytes, shown, offset)
        bytes_after = max(0, size - file.tell())
        if not lines:
            return Page([], skipped, 0, False)  # an empty file, or an offset past the end
        left = _skip_lines(file, sys.maxsize) if bytes_after <= COUNT_LIMIT else None
        total = None if left is None else offset - 1 + len(lines) + left
        return Page(lines, total, bytes_after, cut)


def read_text(target: Path, shown: str) -> str:
    """The whole text of a file for editing: a regular UTF-8 file of at most EDIT_LIMIT bytes."""
    with open_regular(target, shown) as file:
        size = os.fstat(file.fileno()).st_size
        if size <= EDIT_LIMIT:
            data = file.read(EDIT_LIMIT + 1)  # one byte more: a file that grew is caught too
            size = len(data)
    if size > EDIT_LIMIT:
        raise ToolError(
            f"'{shown}' is {size:,} bytes; edit_file changes files of up to {EDIT_LIMIT:,} "
            "bytes. Change it with bash instead (e.g. `sed -i.bak`, which GNU and BSD sed "
            "both accept, or a short Python script)."
        )
    return _decode(data, shown, size, whole=True)


def open_regular(target: Path, shown: str) -> BinaryIO:
    """Open a regular file for reading; a folder, FIFO, socket or device is refused.

    The type is checked before opening, since opening a FIFO waits for a writer and a
    device such as /dev/zero never ends; and again on the open file, in case another
    was swapped in between.  Where the system has O_NONBLOCK and O_NOFOLLOW, the open
    itself can neither hang nor follow a link; where it has not, the open file must be
    the very file that was checked (same device and inode), or it is refused.
    """
    try:
        before = os.lstat(target)
    except FileNotFoundError:
        message = f"no such file: '{shown}'. List the folder with bash `ls` to find it."
        raise ToolError(message) from None
    mode = before.st_mode if not stat.S_ISLNK(before.st_mode) else os.stat(target).st_mode
    if stat.S_ISDIR(mode):
        raise ToolError(f"'{shown}' is a folder; list it with bash `ls {shown}`")
    refuse_unless_regular(mode, shown)
    fd = os.open(target, os.O_RDONLY | BINARY | NONBLOCK | NOFOLLOW)
    try:
        opened = os.fstat(fd)
        refuse_unless_regular(opened.st_mode, shown)
        if not NOFOLLOW and (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise ToolError(f"'{shown}' changed while it was being opened; try again")
    except ToolError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


FILE_KINDS = [
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
]


def refuse_unless_regular(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((kind for test, kind in FILE_KINDS if test(mode)), "not a file of a known kind")
    raise ToolError(f"'{shown}' is {kind}, not a regular file; only regular files are used")


BYTE_ORDER_MARKS = {
    b"\xff\xfe\x00\x00": "utf-32",
    b"\x00\x00\xfe\xff": "utf-32",
    b"\xff\xfe": "utf-16",
    b"\xfe\xff": "utf-16",
}


def _decode(data: bytes, shown: str, size: int, *, whole: bool) -> str:
    """`data` as UTF-8 text, or a ToolError saying it is binary or in another encoding.

    `whole` is False for the first block of a longer file, which may end in the middle
    of a character.
    """
    for mark, encoding in BYTE_ORDER_MARKS.items():
        if data.startswith(mark):
            raise _not_utf8(shown, "by its byte-order mark", encoding)
    if b"\0" in data[:READ_BLOCK]:
        raise ToolError(
            f"'{shown}' is a binary file ({size:,} bytes), not text; inspect it with "
            f"bash (`file {shown}`, `xxd {shown} | head`)"
        )
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError as error:
        detail = f"byte 0x{data[error.start]:02x} at offset {error.start:,}"
        raise _not_utf8(shown, detail, _guess_encoding(data)) from None


def _guess_encoding(data: bytes) -> str:
    """A cheap guess for the hint: CJK encodings use high bytes in pairs, Latin-1 one at a time."""
    runs = [len(run) for run in re.findall(rb"[\x80-\xff]+", data[:READ_BLOCK])]
    return "gb18030" if sum(n for n in runs if n > 1) > sum(runs) / 2 else "latin1"


ENCODING_NAMES = {
    "latin1": "Latin-1 or Windows-1252",
    "gb18030": "GBK or GB18030",
    "utf-16": "UTF-16",
    "utf-32": "UTF-32",
}


def _not_utf8(shown: str, detail: str, encoding: str) -> ToolError:
    return ToolError(
        f"'{shown}' is not UTF-8 text ({detail}; it looks like {ENCODING_NAMES[encoding]}); "
        f"look at it with bash, e.g. `iconv -f {encoding} -t utf-8 {shown} | head`"
    )


def _skip_lines(file: BinaryIO, count: int) -> int:
    """Move past `count` lines, a block at a time; return how many there were (fewer at the end).

    With `count=sys.maxsize` it counts the lines left.  A last line without "\\n" counts.
    """
    skipped, last = 0, b"\n"
    while skipped < count:
        block = file.read(READ_BLOCK)
        if not block:
            return skipped + (last != b"\n")
        newlines = block.count(b"\n")
        if skipped + newlines >= count:  # the wanted line starts in this block
            end = -1
            for _ in range(count - skipped):
                end = block.index(b"\n", end + 1)
            file.seek(end + 1 - len(block), os.SEEK_CUR)
            return count
        skipped, last = skipped + newlines, block[-1:]
    return skipped


def _take_lines(
    file: BinaryIO, limit: int, max_bytes: int, shown: str, first: int
) -> tuple[list[str], bool]:
    """Up to `limit` whole lines that fit in `max_bytes`; a first line too long for it is cut.

    The file is left at the start of the first line not taken.
    """
    lines: list[str] = []
    room = max_bytes
    while len(lines) < limit and room > 0:
        start = file.tell()
        raw = file.readline(room + 2)  # room for the line and its "\r\n", or it is longer
        if not raw:
            break
        body = raw.removesuffix(b"\n").removesuffix(b"\r")
        if len(body) > room and lines:  # no room left for this line: the next page starts here
            file.seek(start)
            break
        if len(body) > room:  # a single line longer than the limit: show its beginning
            lines.append(_decode_line(_cut_at_character(body, room), shown, first))
            if not raw.endswith(b"\n"):
                _skip_lines(file, 1)  # to the end of this line
            return lines, True
        lines.append(_decode_line(body, shown, first + len(lines)))
        room -= len(body) + 1
    return lines, False


def _decode_line(body: bytes, shown: str, number: int) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        detail = f"line {number}, byte 0x{body[error.start]:02x}"
        raise _not_utf8(shown, detail, _guess_encoding(body)) from None


def _cut_at_character(data: bytes, size: int) -> bytes:
    """At most `size` bytes of UTF-8, never ending inside a character."""
    while 0 < size < len(data) and data[size] & 0xC0 == 0x80:  # a continuation byte
        size -= 1
    return data[:size]


# --- writing -------------------------------------------------------------------------


def write_text(target: Path, shown: str, text: str) -> None:
    """Create or replace a file through a new temporary file and a rename.

    A crash never leaves half a file.  The temporary file gets a random name and is
    created exclusively, so nothing planted in the folder (a symlink at a guessable
    name) can redirect the write.  An existing file keeps its mode and, where this
    process may, its owner; one this user may not write is left as it is, since a
    rename would replace it regardless of its permissions.
    """
    if shown.endswith(("/", os.sep)):
        raise ToolError(f"'{shown}' ends with '/', so it names a folder; give a file path")
    old = _writable_file(target, shown)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ToolError(f"the text is not valid Unicode ({error.reason}); send text") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = target.parent.resolve()
    if folder != target.parent:  # a folder on the way was swapped for a link since it was checked
        raise ToolError(f"a folder on the way to '{shown}' changed while writing; try again")
    temporary = folder / f".tmp-{secrets.token_hex(8)}"  # short: a 255-byte name still fits
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY | NOFOLLOW  # O_EXCL: never a link
    try:
        fd = os.open(temporary, flags, 0o666)
    except PermissionError:
        raise ToolError(f"cannot create a file beside '{shown}': permission denied") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            if old and hasattr(os, "fchown"):
                _keep_owner(file.fileno(), old)
            if old and hasattr(os, "fchmod"):  # before the rename: never a moment too open
                os.fchmod(file.fileno(), stat.S_IMODE(old.st_mode))
            file.flush()
            os.fsync(file.fileno())
        if old and not hasattr(os, "fchmod"):
            os.chmod(temporary, stat.S_IMODE(old.st_mode))
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _writable_file(target: Path, shown: str) -> os.stat_result | None:
    """The existing file's status (None if there is none), or a ToolError if it may not change.

    A file with no write permission at all counts as read-only even for root, which
    could write it anyway: someone made it read-only on purpose.
    """
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{shown}' is a folder; give a file path")
    refuse_unless_regular(info.st_mode, shown)
    if not os.access(target, os.W_OK) or not info.st_mode & 0o222:
        raise ToolError(
            f"'{shown}' is not writable for this user (mode {stat.S_IMODE(info.st_mode):o}, "
            f"owner uid {info.st_uid}); it is unchanged. If it should change, its owner "
            f"must make it writable first (`chmod u+w {shown}`)."
        )
    return info


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """Give the new file the old one's owner where allowed (root may; others keep the group).

    Called before chmod, since chown clears the set-user-ID bit.
    """
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        with contextlib.suppress(PermissionError):
            os.fchown(fd, -1, old.st_gid)


# --- reading and writing at a position ---------------------------------------------------


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to `size` bytes from `offset`, as `os.pread`; by seeking where there is none."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def write_at(fd: int, data: bytes, offset: int) -> None:
    """Write all of `data` at `offset`, as `os.pwrite`; by seeking where there is none."""
    if hasattr(os, "pwrite"):
        written = os.pwrite(fd, data, offset)
    else:
        os.lseek(fd, offset, os.SEEK_SET)
        written = os.write(fd, data)
    if written < len(data):  # only on a full disk or a signal
        write_at(fd, data[written:], offset + written)
