from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import OptionalTarget, Target, Tool

__all__ = ["Click", "Type", "PressKey", "Hover", "Drag", "SelectOption", "FormField", "FillForm",
           "UploadFile", "FileUpload"]

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class Click(Target):
    """Click an element. If the click starts a navigation, returns once the new page has loaded."""

    name = "browser_click"

    doubleClick: bool = Field(False, description="Double-click instead of a single click.")
    button: Literal["left", "right", "middle"] = Field("left", description="Mouse button.")
    modifiers: list[Modifier] = Field(
        default_factory=list, max_length=5, description="Modifier keys held during the click."
    )


class Type(Target):
    """Type text into an editable element, replacing its content."""

    name = "browser_type"

    text: str = Field(..., max_length=100_000, description="The text to type.")
    submit: bool = Field(False, description="Press Enter after typing.")
    slowly: bool = Field(
        False, description="Type one character at a time, to trigger key handlers."
    )


class PressKey(Tool):
    """Press a key on the keyboard (Playwright key names: Enter, ArrowLeft, a, Control+A...)."""

    name = "browser_press_key"

    key: str = Field(..., min_length=1, max_length=64, description="Key name or character.")


class Hover(Target):
    """Hover the mouse over an element."""

    name = "browser_hover"


class Drag(Tool):
    """Drag one element and drop it on another (each named by ref or selector)."""

    name = "browser_drag"

    startRef: str | None = Field(None, max_length=64, description="Ref of the element to drag.")
    startSelector: str | None = Field(None, max_length=2000, description="CSS selector of it.")
    startElement: str | None = Field(None, max_length=500, description="Description of it.")
    endRef: str | None = Field(None, max_length=64, description="Ref of the drop target.")
    endSelector: str | None = Field(None, max_length=2000, description="CSS selector of it.")
    endElement: str | None = Field(None, max_length=500, description="Description of it.")

    @model_validator(mode="after")
    def _both_ends(self) -> Drag:
        for end in ("start", "end"):
            if (getattr(self, f"{end}Ref") is None) == (getattr(self, f"{end}Selector") is None):
                raise ValueError(f"give exactly one of {end}Ref or {end}Selector")
        return self


class SelectOption(Target):
    """Select one or more options in a <select> element, by value or label."""

    name = "browser_select_option"

    values: list[str] = Field(..., min_length=1, max_length=100, description="Values or labels.")


class FormField(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str | None = Field(None, max_length=64, description="Ref from the latest snapshot.")
    selector: str | None = Field(None, max_length=2000, description="CSS selector instead of ref.")
    name: str = Field(..., max_length=500, description="Human-readable field name.")
    type: Literal["textbox", "checkbox", "radio", "combobox", "slider"]
    value: str = Field(..., max_length=100_000, description="Text; 'true'/'false' for a checkbox; "
                       "the option for a combobox; the number for a slider.")

    @model_validator(mode="after")
    def _one_target(self) -> FormField:
        if (self.ref is None) == (self.selector is None):
            raise ValueError("give exactly one of ref or selector")
        return self


class FillForm(Tool):
    """Fill several form fields at once."""

    name = "browser_fill_form"

    fields: list[FormField] = Field(..., min_length=1, max_length=100)


class UploadFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., min_length=1, max_length=255, description="File name, no directories.")
    content: str = Field(..., max_length=14_000_000, description="File content, base64.")

    @model_validator(mode="after")
    def _plain_name(self) -> UploadFile:
        if "/" in self.name or "\\" in self.name or self.name in (".", ".."):
            raise ValueError(f"{self.name!r} is not a plain file name")
        try:
            base64.b64decode(self.content, validate=True)
        except ValueError:
            raise ValueError(f"content of {self.name!r} is not valid base64") from None
        return self


class FileUpload(OptionalTarget):
    """Upload files to a file input: the one given by ref/selector, or the file chooser the last
    action opened. Send the bytes (files), or name files inside the worker's upload directory (paths)."""

    name = "browser_file_upload"

    files: list[UploadFile] = Field(default_factory=list, max_length=20)
    paths: list[str] = Field(default_factory=list, max_length=20,
                             description="Files relative to the worker's upload directory.")

    @model_validator(mode="after")
    def _something(self) -> FileUpload:
        if not self.files and not self.paths:
            raise ValueError("give files (name + base64 content) or paths")
        return self
