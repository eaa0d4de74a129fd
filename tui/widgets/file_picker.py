"""Picking a .toml file from a directory tree (the start-a-run modal's Browse buttons)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Label

from loadtower.store.terminal_text import visible

SUFFIX = ".toml"


class TomlTree(DirectoryTree):
    """Folders and .toml files; hidden entries left out."""

    def process_label(self, label: str | Text) -> Text:
        """A file name as plain text (Tree reads str labels as markup: "x[/].toml" would
        end the app), its control characters spelled out."""
        if isinstance(label, Text):
            return Text(visible(label.plain, False), style=label.style)
        return Text(visible(label, False))

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if not p.name.startswith(".")
                and (self._safe_is_dir(p) or p.suffix == SUFFIX)]


def start_folder(current: str) -> Path:
    """Where to open the tree: the folder of the file typed so far, else the working
    directory."""
    path = Path(current).expanduser() if current.strip() else Path.cwd()
    for folder in (path, *path.parents):
        if folder.is_dir():
            return folder.resolve()
    return Path.cwd()


class FilePicker(ModalScreen[Path | None]):
    DEFAULT_CSS = """
    FilePicker { align: center middle; }
    FilePicker > Vertical {
        width: 90; max-width: 100%; height: 80%; border: thick $accent; background: $surface; padding: 0 1;
    }
    FilePicker #picker-folder { color: $text-muted; }
    FilePicker TomlTree { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("backspace", "parent", "Parent folder"),
    ]

    def __init__(self, title: str, folder: Path) -> None:
        super().__init__()
        self.title_text, self.folder = title, folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"{self.title_text}: enter opens a folder or picks a file, "
                             "backspace goes up, esc cancels"))
            yield Label(Text(visible(self.folder, False)), id="picker-folder")
            yield TomlTree(self.folder, id="picker-tree")

    def on_mount(self) -> None:
        self.query_one(TomlTree).focus()

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(event.path)

    def action_parent(self) -> None:
        parent = self.folder.parent
        if parent != self.folder:
            self.folder = parent
            self.query_one(TomlTree).path = parent
            self.query_one("#picker-folder", Label).update(Text(visible(parent, False)))

    def action_cancel(self) -> None:
        self.dismiss(None)
