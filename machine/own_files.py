"""A program's own files inside a folder it must not leave, and folders of one's own.

Chapter 4 keeps its sessions, locks, memory logs and skills in `.agent/` of the work
directory, a folder that a cloned repository can ship with anything in it.  It opens
them only through these functions, by the tools' rules: the folder, resolved, must be
inside the work directory; the file itself is never a link, only a regular file, and
read up to a cap.  Each refusal is a ToolError that says why.  `private_folder` makes a
folder in a shared place (the temporary folder) that is this user's alone.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from .errors import ToolError
from .files import BINARY, NOFOLLOW, NONBLOCK, refuse_unless_regular

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
        refuse_unless_regular(opened.st_mode, str(target))
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
