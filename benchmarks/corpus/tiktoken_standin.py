"""An offline stand-in for ``tiktoken`` (prepare.py puts it beside the ch04 notebook).

tiktoken fetches its GPT-2 BPE files on first use; without a network they are not there.
This stand-in splits text as GPT-2's pattern does (words with their leading space,
punctuation, spaces) and gives each piece a fixed id from a checksum, so token counts
are close to GPT-2's and every run gives the same ids. Ids differ from GPT-2's; pieces
never seen by ``encode`` in this process decode as ``<ID>``.
"""

from __future__ import annotations

import re
import zlib

__version__ = "stand-in"

_PIECES = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")
_EOT = "<|endoftext|>"


class Encoding:
    """What ch03/ch04 use of ``tiktoken.Encoding``: encode, decode, n_vocab, eot_token."""

    def __init__(self, name: str, n_vocab: int = 50257) -> None:
        self.name = name
        self.n_vocab = n_vocab
        self.eot_token = n_vocab - 1
        self._seen: dict[int, str] = {self.eot_token: _EOT}

    def _id(self, piece: str) -> int:
        token = zlib.crc32(piece.encode()) % self.eot_token
        self._seen.setdefault(token, piece)
        return token

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list:
        out: list[int] = []
        parts = text.split(_EOT) if _EOT in allowed_special or allowed_special == "all" else [text]
        for i, part in enumerate(parts):
            if i:
                out.append(self.eot_token)
            out.extend(self._id(p) for p in _PIECES.findall(part))
        return out

    def decode(self, tokens) -> str:
        return "".join(self._seen.get(int(t), f"<{int(t)}>") for t in tokens)


def get_encoding(name: str) -> Encoding:
    return Encoding(name)
