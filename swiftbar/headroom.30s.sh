#!/bin/sh
# <xbar.title>headroom</xbar.title>
# <xbar.desc>Process slots against the binding limit, the ETA to the wall and the top zombie parent, from headroom probe.</xbar.desc>
# <xbar.dependencies>headroom</xbar.dependencies>
# <xbar.abouturl>https://github.com/headroom-cli/headroom</xbar.abouturl>
# <swiftbar.hideRunInTerminal>true</swiftbar.hideRunInTerminal>
#
# Written by `headroom generate swiftbar`; Homebrew installs it as
# $(brew --prefix)/share/headroom/swiftbar/headroom.30s.sh. Link it into SwiftBar's (or
# xbar's) plugin folder; the 30s in the name is how often it runs. Each run is one probe.
format=swiftbar
# xbar reads the same protocol but refuses SwiftBar's own parameters.
if [ -z "${SWIFTBAR:-}" ] && [ -n "${XBARDarkMode:-}" ]; then
  format=xbar
fi
for h in "$(command -v headroom 2>/dev/null)" /opt/homebrew/bin/headroom /usr/local/bin/headroom "$HOME/.cargo/bin/headroom"; do
  if [ -n "$h" ] && [ -x "$h" ]; then
    exec "$h" probe --format "$format"
  fi
done
echo "headroom? | color=#57606a"
echo "---"
echo "headroom is not on PATH, in /opt/homebrew/bin, /usr/local/bin or ~/.cargo/bin"
echo "How to install headroom | href=https://github.com/headroom-cli/headroom#install"
