"""A recorded command (`runner.command`, `runner.invocation`) as a person reads it, and the
characters it may not hold (FORMAT.md, "Recorded commands").

A terminal does not show every character as itself: an escape sequence can erase or recolour
what came before it, a carriage return or backspace can overwrite it, and a bidirectional
mark reorders it. A command holding one can read `echo "30 tok"` at a consent prompt and run
`touch MARK`, so such characters are refused (`hidden_problems`), and everything that prints
a command prints `shell_line`: each word quoted as a POSIX shell reads it, and a word holding
a tab, a line break, a space other than the ASCII one (`SPACES`, allowed but drawn as a plain
space, so one word would look like two) or any character refused here in bash's `$'...'`
quoting, where they read `\\t`, `\\n`, `\\u00a0`, `\\x1b`. The line shown is therefore one line,
and a shell reads it as the exact argv that runs.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Sequence

MAX_ARGUMENT_BYTES = 131_072
"""Linux's MAX_ARG_STRLEN: the most one argument of a program may hold, its terminating NUL
included, so 131,071 bytes of UTF-8 (131,071 characters of ASCII)."""

# C0 controls but tab and line feed, DEL, C1 controls; the bidirectional marks, embeddings,
# overrides and isolates (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069); and the characters
# that draw nothing or break a line: zero-width space and joiners (U+200B-U+200D), the line and
# paragraph separators (U+2028/9), word joiner and invisible operators (U+2060-U+2064), and the
# byte order mark (U+FEFF); and a lone surrogate (U+D800-U+DFFF, which YAML's \uD800 makes), which
# is no character at all and which neither a terminal nor execve can take. With them, the rest of
# Unicode's default-ignorable code points, which a terminal draws as nothing: the soft hyphen
# (U+00AD), the combining grapheme joiner (U+034F), the Hangul fillers (U+115F, U+1160, U+3164,
# U+FFA0), the Khmer inherent vowels (U+17B4/5), the Mongolian selectors (U+180B-U+180F), the
# deprecated format characters (U+2065, U+206A-U+206F), the variation selectors (U+FE00-U+FE0F,
# U+E0100-U+E01EF), the interlinear annotation marks (U+FFF9-U+FFFB), the shorthand and musical
# format controls (U+1BCA0-U+1BCA3, U+1D173-U+1D17A) and the tag characters (U+E0000-U+E0FFF),
# which can spell out a whole hidden text
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2028\u2029\u202a-\u202e\u2060-\u206f\u3164\ud800-\udfff\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# Unicode's space separators but the ASCII space (category Zs): the no-break spaces (U+00A0, U+202F),
# U+1680, the typographic spaces U+2000-U+200A, U+205F and the ideographic space U+3000. A command
# may hold them (a prompt's text), but a terminal draws each as a plain space, so a word holding one
# is printed in `$'...'` with the space written \u00a0: one word never reads as two
SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_ESCAPED = re.compile(f"[\\t\\n\\\\']|{HIDDEN.pattern}|{SPACES.pattern}")
_NAMES = {
    0x08: "backspace",
    0x09: "tab",
    0x0A: "line feed",
    0x0D: "carriage return",
    0x1B: "ESC, which starts a terminal escape sequence",
    0x7F: "DEL",
    0x9B: "CSI, which starts a terminal escape sequence",
}
FOLD_AT = 1_000
"""A command longer than this is printed folded at a terminal, in lines of FOLD_WIDTH."""
FOLD_WIDTH = 100


def describe(ch: str) -> str:
    """A character a terminal does not show, named: `U+001B (ESC, ...)`."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} (a lone surrogate, which is not a character)"
    name = _NAMES.get(code) or unicodedata.name(ch, "a control character").lower()
    return f"U+{code:04X} ({name})"


def hidden_problems(words: Sequence[str]) -> list[tuple[int, str]]:
    """What is wrong with a recorded command's words, each with the word's index from 0: a
    character a terminal does not show as itself, or a word longer than one argument may be."""
    out = []
    for i, word in enumerate(words):
        found = HIDDEN.search(word)
        if found is not None:
            message = (
                f"word {i + 1} holds {describe(found.group())} at character {found.start() + 1}, which a "
                "terminal does not show as itself, so a person cannot read what would run; remove it (in a "
                "script, write it as the program's own escape, e.g. printf '\\033')"
            )
            out.append((i, message))
        size = len(word.encode("utf-8", "surrogatepass"))
        if size >= MAX_ARGUMENT_BYTES:
            message = (
                f"word {i + 1} is {size:,} bytes; one argument of a program holds at most "
                f"{MAX_ARGUMENT_BYTES - 1:,} bytes ({MAX_ARGUMENT_BYTES:,} with its terminating NUL: Linux's "
                "MAX_ARG_STRLEN), so it cannot run; put the script in a file and run that file"
            )
            out.append((i, message))
    return out


def shell_word(word: str) -> str:
    """One word as a shell reads it: shlex's quoting, or `$'...'` when it holds a tab, a line
    break, a space other than ASCII's or a character a terminal does not show (written \\t, \\n,
    \\xHH, \\uHHHH)."""
    if not word or not (HIDDEN.search(word) or SPACES.search(word) or "\t" in word or "\n" in word):
        return shlex.quote(word)
    return "$'" + _ESCAPED.sub(_escape, word) + "'"


def _escape(found: re.Match[str]) -> str:
    ch = found.group()
    special = {"\t": "\\t", "\n": "\\n", "\\": "\\\\", "'": "\\'"}
    if ch in special:
        return special[ch]
    if ord(ch) < 0x80:
        return f"\\x{ord(ch):02x}"
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"  # bash's \u reads 4 digits at most


def shell_line(argv: Sequence[str]) -> str:
    """A command as one line a shell reads as exactly `argv` (bash, zsh and POSIX.1-2024 sh
    read `$'...'`); nothing in it moves the cursor or reorders text."""
    return " ".join(shell_word(word) for word in argv)


def folded(line: str, width: int = FOLD_WIDTH) -> list[str]:
    """`line` cut into pieces of `width` characters, to print one under another. A shown
    command holds no line break of its own (shell_line writes it \\n), so every break between
    the pieces is a fold."""
    return [line[i : i + width] for i in range(0, len(line), width)] or [""]
