"""Prints the pip requirements of the Home Assistant integrations named on the command line and of everything they
depend on, read from their manifests (Home Assistant runs with --skip-pip in the check, so they must be installed
first). Run with the venv's Python."""
import json, pathlib, sys
import homeassistant.components as components
root = pathlib.Path(components.__file__).parent
todo = sys.argv[1:]
seen, requirements = set(), set()
while todo:
    name = todo.pop()
    if name in seen or not (root / name / "manifest.json").exists():
        continue
    seen.add(name)
    manifest = json.loads((root / name / "manifest.json").read_text())
    requirements.update(manifest.get("requirements", []))
    todo += manifest.get("dependencies", []) + manifest.get("after_dependencies", [])
print("\n".join(sorted(requirements)))
