"""Natural order of ids: "2" before "10" (peer ids and system ids are mostly numbers), letters after
numbers. One definition for every list of peers or systems (the annotator's walk, the dashboards)."""


def natural_key(text: str) -> tuple:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _split_digits(text))


def _split_digits(text: str) -> list[str]:
    parts, current = [], ""
    for ch in text:
        if current and ch.isdigit() != current[-1].isdigit():
            parts.append(current)
            current = ""
        current += ch
    return parts + ([current] if current else [])
