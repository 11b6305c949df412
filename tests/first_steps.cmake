# What a newcomer meets first: the demo, the help and completion, the Debian package.

add_test(NAME help_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/help_test.sh $<TARGET_FILE:stitch>
                 ${PROJECT_SOURCE_DIR}/man)
set_tests_properties(help_test PROPERTIES LABELS "cli" TIMEOUT 120)

add_test(NAME completion_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/completion_test.sh $<TARGET_FILE:stitch>
                 $<TARGET_FILE:stitchfs> ${PROJECT_SOURCE_DIR}/completion/stitch.bash)
set_tests_properties(completion_test PROPERTIES LABELS "cli" TIMEOUT 120)

add_test(NAME progress_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/progress_test.sh $<TARGET_FILE:stitch>)
set_tests_properties(progress_test PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77)

# scripts/demo.sh with the binaries of this build (nothing installed or built).
add_test(NAME demo_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/demo_test.sh $<TARGET_FILE:stitch>
                 $<TARGET_FILE:stitchfs> ${PROJECT_SOURCE_DIR})
set_tests_properties(demo_test PROPERTIES LABELS "integration" TIMEOUT 300 SKIP_RETURN_CODE 77)

# scripts/package.sh (its own build folder, build-deb/ in the source tree), lintian, and the
# package's files used from a scratch root.
add_test(NAME package_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/package_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(package_test PROPERTIES LABELS "integration;package" TIMEOUT 1800
                                             SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)

# scripts/demo.sh --clickhouse (the real ClickHouse: scripts/install-clickhouse.sh).
add_test(NAME ch_demo_test
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/clickhouse/ch_demo_test.sh $<TARGET_FILE:stitch>
                 $<TARGET_FILE:stitchfs> ${PROJECT_SOURCE_DIR})
set_tests_properties(ch_demo_test PROPERTIES LABELS "clickhouse" TIMEOUT 600 SKIP_RETURN_CODE 77)
