"""Writing one section of BENCHMARKS.md, shared by the scripts that each own one."""

import os


def write_section(path, section):
    """Replaces the section whose heading is `section`'s first line (up to the next "## "
    heading) in the file at `path`, or appends it."""
    heading = section.split("\n", 1)[0]
    text = open(path).read() if os.path.exists(path) else ""
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(heading))
        rest = "" if end < 0 else text[end + 1:]
        text = text[:start] + section + ("\n" + rest if rest else "")
    with open(path, "w") as out:
        out.write(text)
