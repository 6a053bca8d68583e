# `cpack -G DEB` in a build directory makes the .deb: the three binaries (stripped), the
# desktop entry and icons, AppStream metainfo, man pages, the systemd units of the endpoint and
# the scheduled inspection, /etc/payops/callbackd.conf and an nginx example
# (packaging/install.cmake). The maintainer scripts install the units but start nothing.
include(${CMAKE_CURRENT_LIST_DIR}/install.cmake)

set(CPACK_PACKAGE_NAME "payops")
set(CPACK_PACKAGE_VENDOR "payops")
set(CPACK_PACKAGE_CONTACT "payops maintainers <payops@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "payops-console, a Qt desktop console on MySQL/MariaDB that shows the duplicate side effects of
payment callbacks and how they happened, and lets an operator stop the bleeding;
payops-callbackd, the callback endpoint, with a systemd unit; and payops, the command line
for runbooks and cron, with a systemd timer for its inspection.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6sql6-mysql")
# The Chinese font for the console and the report, Qt's own dialogs in Chinese; the system's CA
# store, against which a gateway verifies an https upstream without --upstream-ca.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "mariadb-server, fonts-wqy-microhei, qt6-translations-l10n, ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nginx")
# xz makes the smaller package; the packaging test asks for gzip (`cpack -D
# CPACK_DEBIAN_COMPRESSION_TYPE=gzip`), which is several times faster.
set(CPACK_DEBIAN_COMPRESSION_TYPE "xz")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_LIST_DIR}/debian/conffiles"
    "${CMAKE_CURRENT_LIST_DIR}/debian/postinst"
    "${CMAKE_CURRENT_LIST_DIR}/debian/prerm"
    "${CMAKE_CURRENT_LIST_DIR}/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR "DEB")
include(CPack)
