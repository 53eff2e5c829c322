#!/usr/bin/env bash
# Installs what the browser checks (scripts/check-web.sh, scripts/check-editor.py, check-editor-firefox.py) need, if
# missing: Debian's headless chromium, its WebDriver, python3-selenium, firefox-esr and python3-websocket. Kept apart
# from bootstrap.sh so that building alone never pulls a browser; the test command (scripts/test.sh) runs it.
set -euo pipefail

# firefox-esr and python3-websocket: the editor's Firefox smoke test (scripts/check-editor-firefox.py, over BiDi).
packages=(chromium chromium-driver python3-selenium mosquitto-clients firefox-esr python3-websocket)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "bootstrap-browser: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
