"""docs/architecture.md's module table follows the build's module order (src/balancenet/Modules.cmake).

Usage: architecture_table.py <build>/module_order.txt docs/architecture.md
The first file is what the configure found (cmake/ModuleOrder.cmake): one line per module, in order, with the modules
its files include. The table must list the same modules in the same order, and each row's "depends on" column must
name exactly those modules ("nothing" for none; notes in parentheses are ignored). Prints every difference; exit 1
when there is one.
"""
import re
import sys


def read_order(path):
    order = []
    for line in open(path, encoding="utf-8"):
        if line.strip():
            module, _, uses = line.partition(":")
            order.append((module.strip(), uses.split()))
    return order


def read_table(path, modules):
    rows = []
    for line in open(path, encoding="utf-8"):
        match = re.match(r"^\| `([a-z/]+)/` \|(.*)\|([^|]*)\|\s*$", line)
        if match:
            depends = re.sub(r"\([^)]*\)", "", match.group(3))
            names = re.findall(r"[a-z]+(?:/[a-z]+)?", depends)
            rows.append((match.group(1), [n for n in names if n in modules], names))
    return rows


def main():
    order = read_order(sys.argv[1])
    modules = [m for m, _ in order]
    rows = read_table(sys.argv[2], set(modules))
    problems = []
    if [r[0] for r in rows] != modules:
        problems.append(f"the table's modules, in order: {' '.join(r[0] for r in rows)}\n"
                        f"  the build's (src/balancenet/Modules.cmake): {' '.join(modules)}")
    uses = dict(order)
    for module, named, words in rows:
        if module not in uses:
            continue
        stray = [w for w in words if w not in uses and w != "nothing"]
        if stray:
            problems.append(f"{module}: 'depends on' names what is no module: {' '.join(stray)}")
        if set(named) != set(uses[module]):
            problems.append(f"{module}: the table says it depends on {', '.join(named) or 'nothing'}; "
                            f"its files include {', '.join(uses[module]) or 'nothing'}")
    for problem in problems:
        print(f"architecture_table: {problem}")
    print(f"architecture_table: {len(rows)} rows, {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
