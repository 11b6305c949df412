# Installed besides the binaries and manual pages, and the Debian package built from it all
# (scripts/package.sh: `cpack -G DEB` in a build folder configured with the prefix /usr).
# The version is the project's (CMakeLists.txt's project(), what `stitch --version` prints).

install(FILES completion/stitch.bash DESTINATION share/bash-completion/completions RENAME stitch)
install(CODE "execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink stitch
  \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions/stitchfs)")
install(FILES mount-helpers/mnt-backup.mount DESTINATION share/doc/stitchfs/examples)
install(FILES cmake/deb/copyright DESTINATION share/doc/stitchfs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME stitchfs)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "stitchfs maintainers <maintainers@users.noreply.a-seed-362b9fdc.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "incremental backups of append-heavy data, any point in time as a folder")
set(CPACK_PACKAGE_DESCRIPTION
    "stitch writes and reads backups in ClickHouse's backup format: a file that\n"
    "only grew is stored as the bytes appended since the previous backup.\n"
    "stitchfs mounts a backup, or a whole folder of them (every backup, the\n"
    "latest, any point in time), as a read-only FUSE file system. Backups may\n"
    "live in folders, archives or S3-compatible object storage.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # stitchfs_VERSION_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # Depends: what dpkg-shlibdeps finds, and fuse3
# fuse3: fusermount3, to unmount. libcurl4: loaded when object storage is first used, not
# linked, so dpkg-shlibdeps cannot see it (7.75 brought the SigV4 signer the S3 client uses).
# The archive codecs likewise, loaded when an archive first needs one.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "fuse3, libcurl4 (>= 7.75.0), zlib1g, libzstd1, liblzma5, libbz2-1.0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS attr)  # getfattr, for the provenance attributes.
# Debian wants compressed manual pages and a changelog: done in the staged tree.
configure_file(cmake/deb/changelog.in deb/changelog @ONLY)
set(STITCHFS_DEB_CHANGELOG ${CMAKE_CURRENT_BINARY_DIR}/deb/changelog)
configure_file(cmake/deb/finish.cmake.in deb/finish.cmake @ONLY)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_BINARY_DIR}/deb/finish.cmake)
include(CPack)
