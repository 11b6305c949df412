# Unity builds (CMAKE_UNITY_BUILD=ON: scripts/demo.sh and scripts/package.sh build the two
# programs in about half the time) put each folder's files into one translation unit, so names
# local to a file (anonymous namespaces, statics) need only differ from those of the other
# files of its folder. scripts/package.sh, and so package_test, builds this way.
foreach(target stitch_engine stitch_fs stitch)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    get_filename_component(folder "${source}" DIRECTORY)
    string(MAKE_C_IDENTIFIER "g_${folder}" group)
    if(NOT IS_ABSOLUTE "${source}")
      set(source "${dir}/${source}")
    endif()
    set_source_files_properties("${source}" DIRECTORY "${dir}" PROPERTIES UNITY_GROUP "${group}")
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD_MODE GROUP)
endforeach()
