# What the .deb holds besides the binaries (app/main/CMakeLists.txt and ui/CMakeLists.txt
# install those): the desktop entry, the icons, the AppStream metainfo, the man pages, the systemd units, the
# settings file and the nginx example. Paths are below CMAKE_INSTALL_PREFIX (/usr in the
# package), except /etc.
set(PAYOPS_RELEASE_DATE "2026-12-03" CACHE STRING "Date of this version, for the AppStream metainfo")
set(payops_packaging "${CMAKE_CURRENT_LIST_DIR}")
set(payops_icons "${PROJECT_SOURCE_DIR}/resources/icons")

if(PAYOPS_BUILD_GUI)
    install(FILES "${payops_packaging}/payops-console.desktop" DESTINATION share/applications)
    foreach(size 16 24 32 48 64 128 256)
        install(FILES "${payops_icons}/hicolor/${size}x${size}/apps/payops.png"
                DESTINATION share/icons/hicolor/${size}x${size}/apps)
    endforeach()
    install(FILES "${payops_icons}/payops.svg" DESTINATION share/icons/hicolor/scalable/apps)
    configure_file("${payops_packaging}/io.github.payops.console.metainfo.xml.in"
                   "${PROJECT_BINARY_DIR}/packaging/io.github.payops.console.metainfo.xml" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/packaging/io.github.payops.console.metainfo.xml" DESTINATION share/metainfo)
endif()

# Man pages carry the version; Debian wants them compressed (gzip -n: no time stamp, so the
# same page makes the same package).
set(payops_man_pages man1/payops.1 man8/payops-callbackd.8)
if(PAYOPS_BUILD_GUI)
    list(APPEND payops_man_pages man1/payops-console.1)
endif()
foreach(page IN LISTS payops_man_pages)
    get_filename_component(name "${page}" NAME)
    get_filename_component(section "${page}" DIRECTORY)
    configure_file("${payops_packaging}/man/${name}" "${PROJECT_BINARY_DIR}/packaging/man/${name}" @ONLY)
    install(CODE "execute_process(COMMAND gzip -9nc \"${PROJECT_BINARY_DIR}/packaging/man/${name}\"
                                  OUTPUT_FILE \"${PROJECT_BINARY_DIR}/packaging/man/${name}.gz\"
                                  COMMAND_ERROR_IS_FATAL ANY)")
    install(FILES "${PROJECT_BINARY_DIR}/packaging/man/${name}.gz" DESTINATION share/man/${section})
endforeach()

install(FILES "${payops_packaging}/systemd/payops-callbackd.service"
              "${payops_packaging}/systemd/payops-inspect.service"
              "${payops_packaging}/systemd/payops-inspect.timer"
        DESTINATION lib/systemd/system)
install(FILES "${payops_packaging}/systemd/payops-.service.d/sandbox.conf"
        DESTINATION lib/systemd/system/payops-.service.d)
# Root's only: the DSN in it may hold the database password (systemd reads it as root).
install(FILES "${payops_packaging}/debian/callbackd.conf" "${payops_packaging}/debian/inspect.conf"
        DESTINATION /etc/payops PERMISSIONS OWNER_READ OWNER_WRITE)
install(FILES "${payops_packaging}/nginx/payops-callbackd.conf" DESTINATION share/doc/payops/examples/nginx)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION share/doc/payops)
# The README is a table of contents: the documents it links go beside it (not the screenshots).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION share/doc/payops/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "screenshots" EXCLUDE)
