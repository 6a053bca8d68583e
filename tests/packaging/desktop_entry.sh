#!/usr/bin/env bash
# desktop_entry.sh SOURCE_DIR BUILD_DIR: the desktop entry and the AppStream metainfo validate,
# and they name the icon and each other.
source "$(dirname "$0")/lib.sh"
source_dir=$1 build_dir=$2
desktop="$source_dir/packaging/payops-console.desktop"
metainfo="$build_dir/packaging/io.github.payops.console.metainfo.xml"

run_silent_check desktop-file-validate "$desktop"
grep -qx 'Icon=payops' "$desktop" || fail "the desktop entry does not name the icon payops"
grep -qx 'Exec=payops-console' "$desktop" || fail "the desktop entry does not start payops-console"

appstreamcli validate --no-net --pedantic "$metainfo" || fail "appstreamcli validate"
grep -q '<launchable type="desktop-id">payops-console.desktop</launchable>' "$metainfo" \
    || fail "the metainfo does not launch payops-console.desktop"
version=$(sed -n 's/^project(payops VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
grep -q "<release version=\"$version\"" "$metainfo" || fail "the metainfo has no release $version"
# The icon the entry names: every hicolor size rendered at its size, and each in the console's
# resources (its window icon).
icons="$source_dir/resources/icons"
grep -q '<svg' "$icons/payops.svg" || fail "resources/icons/payops.svg is no SVG"
for size in 16 24 32 48 64 128 256; do
    png="hicolor/${size}x${size}/apps/payops.png"
    file "$icons/$png" | grep -q "PNG image data, $size x $size," || fail "$png is not a $size px PNG"
    grep -q ">icons/$png</file>" "$source_dir/resources/payops.qrc" || fail "payops.qrc lacks $png"
done
echo "desktop entry, icon and metainfo valid (version $version)"
