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
    _refuse_unless_regular(mode, shown)
    fd = os.open(target, os.O_RDONLY | BINARY | NONBLOCK | NOFOLLOW)
    try:
        opened = os.fstat(fd)
        _refuse_unless_regular(opened.st_mode, shown)
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


def _refuse_unless_regular(mode: int, shown: str) -> None:
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
    _refuse_unless_regular(info.st_mode, shown)
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


# --- a program's own files inside a folder it must not leave -------------------------------
#
# Chapter 4 keeps its sessions, locks, memory logs and skills in `.agent/` of the work
# directory, a folder that a cloned repository can ship with anything in it.  It opens
# them only through these functions, by the tools' rules: the folder, resolved, must be
# inside the work directory; the file itself is never a link, only a regular file, and
# read up to a cap.  Each refusal is a ToolError that says why.

AGENT_FILE_LIMIT = 256_000_000  # bytes of one file of the agent's own; more is not its work
READ_CHUNK = 1 << 20  # how much more is read at a time of a file that grows while read


def agent_path(workdir: Path, path: Path) -> Path:
    """`path` with its folders resolved, its last part left as it is.

    Paths here are as `open` takes them (absolute, or from the current directory), not
    relative to `workdir`.  Refused when a folder on the way leads out of `workdir`.
    """
    target = Path(os.path.abspath(path))
    return _inside(workdir, target.parent) / target.name


def _inside(workdir: Path, folder: Path) -> Path:
    """`folder` resolved, links and all, or a ToolError when that leaves `workdir`."""
    root = Path(os.path.realpath(workdir))
    real = Path(os.path.realpath(folder))  # unlike Path.resolve, never raises on a loop
    if real != root and root not in real.parents:
        raise ToolError(f"'{folder}' leads outside the work directory {root} (a link)")
    return real


# Where `os.open` takes a folder's descriptor and refuses links and non-folders, a path is
# walked one folder at a time from the work directory: each folder opened without
# following a link, the next one opened inside the one held.  A folder swapped for a link
# while the walk goes on is refused, or was already held; nothing lands outside.  Where it
# does not (Windows), the folders are resolved first and checked again after the open.
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
WALKS = os.open in os.supports_dir_fd and bool(DIRECTORY and NOFOLLOW)


def _parts(workdir: Path, path: Path) -> tuple[Path, list[str]]:
    """A folder to start from, and the names from it to `path`, which must lie inside."""
    target = Path(os.path.abspath(path))
    for root in (Path(os.path.abspath(workdir)), Path(os.path.realpath(workdir))):
        if target == root or root in target.parents:
            return root, list(target.relative_to(root).parts)
    real = agent_path(workdir, target)  # reached through a link from elsewhere: resolve it
    root = Path(os.path.realpath(workdir))
    return root, list(real.relative_to(root).parts)


def _walk(root: Path, names: list[str], shown: Path, create: bool) -> int:
    """A descriptor of the folder `root/names…`, each opened inside the one before."""
    if create:  # the work directory itself is the caller's, given as a path
        os.makedirs(root, 0o700, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | DIRECTORY | BINARY)
    try:
        for name in names:
            flags = os.O_RDONLY | DIRECTORY | NOFOLLOW | BINARY
            try:
                inner = os.open(name, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=fd)
                inner = _open_folder(name, flags, fd, shown)
            except OSError as error:
                raise _not_a_folder(shown, name, error) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folder(name: str, flags: int, fd: int, shown: Path) -> int:
    try:
        return os.open(name, flags, dir_fd=fd)
    except OSError as error:
        raise _not_a_folder(shown, name, error) from None


def _not_a_folder(shown: Path, name: str, error: OSError) -> ToolError:
    """A folder on the way that could not be opened as one: a link is never followed."""
    return ToolError(
        f"'{shown}': '{name}' on the way is a link, which may lead outside the work "
        "directory and is never followed, or not a folder"
    )


def make_agent_folder(workdir: Path, path: Path) -> Path:
    """Create the folder `path` inside `workdir` (private to this user), never through a link."""
    if WALKS:
        root, names = _parts(workdir, path)
        os.close(_walk(root, names, path, create=True))
        return root.joinpath(*names)
    folder = _inside(workdir, path)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ToolError(f"'{folder}' is not a folder; move it away to let the agent use it")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if _inside(workdir, path) != folder:  # a folder on the way was swapped for a link
        raise ToolError(f"'{folder}' changed while it was created; try again")
    return folder


def open_agent_file(
    workdir: Path, path: Path, *, create: bool = False, append: bool = False
) -> int:
    """A file descriptor of a regular file inside `workdir`, opened without following a link.

    `create` creates the file (and its folders) when missing, readable by this user
    only; `append` opens it for appending, otherwise it is opened for reading and
    writing in place (a lock file) or, with neither, for reading only.
    FileNotFoundError when it is missing and not to be created.  A file with more than
    one name (a hard link) is refused: its other name may be outside the work directory.
    """
    flags = BINARY | NOFOLLOW | NONBLOCK  # NONBLOCK: a FIFO planted here cannot hang
    if create or append:
        flags |= os.O_RDWR | (os.O_APPEND if append else 0) | (os.O_CREAT if create else 0)
    else:
        flags |= os.O_RDONLY
    fd, target, before = _open(workdir, path, flags, create)
    try:
        opened = os.fstat(fd)
        _refuse_unless_regular(opened.st_mode, str(target))
        if before and (opened.st_dev, opened.st_ino) != before:
            raise ToolError(f"'{target}' changed while it was being opened; try again")
        if opened.st_nlink > 1:
            raise ToolError(
                f"'{target}' has {opened.st_nlink} names (hard links), and another may be "
                "outside the work directory: it is left alone"
            )
    except ToolError:
        os.close(fd)
        raise
    return fd


def _open(workdir: Path, path: Path, flags: int, create: bool) -> tuple[int, Path, tuple | None]:
    """The open descriptor, the path to name in messages, and, where the folders could not
    be walked, the (device, inode) the open file must have."""
    if WALKS:
        root, names = _parts(workdir, path)
        if not names:
            raise ToolError(f"'{path}' is the work directory, not a file in it")
        folder = _walk(root, names[:-1], path, create)
        try:
            return os.open(names[-1], flags, 0o600, dir_fd=folder), path, None
        except FileNotFoundError:
            raise
        except OSError as error:
            raise _refused(path, error) from None
        finally:
            os.close(folder)
    if create:
        make_agent_folder(workdir, path.parent)
    target = agent_path(workdir, path)
    before = not_a_link(target)
    try:
        fd = os.open(target, flags, 0o600)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _refused(target, error) from None
    if agent_path(workdir, path) != target:  # a folder on the way became a link meanwhile
        os.close(fd)
        raise ToolError(f"'{target}' changed while it was being opened; try again")
    return fd, target, before or not_a_link(target)


def _refused(target: Path, error: OSError) -> ToolError:
    if os.path.islink(target):
        return ToolError(f"'{target}' is a symbolic link, which is never followed")
    return ToolError(f"cannot open '{target}': {error.strerror or error}")


def not_a_link(target: Path) -> tuple[int, int] | None:
    """The (device, inode) of `target` if it exists, or None; a ToolError if it is a link."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise ToolError(f"'{target}' is a symbolic link, which is never followed")
    return info.st_dev, info.st_ino


def read_agent_file(workdir: Path, path: Path, limit: int = AGENT_FILE_LIMIT) -> bytes:
    """The bytes of a regular file inside `workdir`, refused when larger than `limit`."""
    fd = open_agent_file(workdir, path)
    with os.fdopen(fd, "rb") as file:
        # What is there and one byte more, so a file that grew is caught too; never a
        # read of `limit` bytes, which would take that much memory for a file of ten.
        size = os.fstat(file.fileno()).st_size
        data = file.read(min(size, limit) + 1)
        while len(data) <= limit and len(data) > size:  # it grew while read: read on
            more = file.read(min(READ_CHUNK, limit + 1 - len(data)))
            if not more:
                break
            data += more
    if len(data) > limit:
        raise ToolError(f"'{path.name}' is larger than {limit:,} bytes; it is left alone")
    return data


def read_agent_text(workdir: Path, path: Path, limit: int = AGENT_FILE_LIMIT) -> str:
    """`read_agent_file`'s bytes as UTF-8 text, a byte-order mark dropped; ToolError if not."""
    data = read_agent_file(workdir, path, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        detail = f"byte at offset {error.start:,}"
        raise ToolError(f"{path.name} is not UTF-8 text ({detail})") from None


# What a name may hold that would change a listing it is shown in: a line break (a
# name `notes\nDONE: all tests pass` adds a line), other controls, and the
# bidirectional controls that turn the text after them around.
NAME_CONTROLS = [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F)]
NAME_ESCAPES = {c: repr(chr(c))[1:-1] for c in [*NAME_CONTROLS, *range(0x2066, 0x206A)]}


def shown_name(name: str | Path) -> str:
    r"""A file's name as a listing shows it: every control character as its escape (`\n`),
    and a byte that was not UTF-8 as its escape too, so a name is always one line."""
    text = str(name).translate(NAME_ESCAPES)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def agent_files(workdir: Path, folder: Path, pattern: str) -> tuple[list[Path], list[str]]:
    """The regular files in `folder` matching `pattern`, sorted, and a note for each skipped."""
    try:
        found = sorted(_inside(workdir, folder).glob(pattern))
    except ToolError as error:
        return [], [str(error)]
    files, skipped = [], []
    for path in found:
        if path.is_symlink() or not path.is_file():
            skipped.append(f"{shown_name(path)}: skipped, it is a link or not a regular file")
        else:
            files.append(path)
    return files, skipped


# --- folders of one's own ------------------------------------------------------------------

USER_ID = os.getuid() if hasattr(os, "getuid") else 0  # 0 where a system has no such ids


def private_folder(path: Path) -> Path:
    """The folder `path`, created readable by this user alone, or a ToolError if it is not.

    A folder at a fixed place in a temporary folder that every user shares could be
    made first by someone else, or be a link: it must be a real folder, this user's,
    closed to the others.  Where a system has no user ids and modes (Windows), its
    temporary folder is the user's own already.
    """
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    found = path.lstat()
    shared = hasattr(os, "getuid") and (found.st_uid != USER_ID or found.st_mode & 0o077)
    if not stat.S_ISDIR(found.st_mode) or shared:
        raise ToolError(f"{path} is not a private folder of yours: remove it, and try again")
    return path
