# Run at every build (tools/CMakeLists.txt, target onda_version_info): writes version_info.h with the
# commit the sources are at now, "-dirty" for local changes, so a rebuild after a pull or a commit
# names it without a new configure. configure_file rewrites the header only when its text changes.
# Inputs: SOURCE_DIR, INPUT, OUTPUT, PROJECT_VERSION, ONDA_DAWN_BUILD, GIT_EXECUTABLE (may be empty).
set(ONDA_GIT_COMMIT "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE ONDA_GIT_COMMIT_OUT
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE ONDA_GIT_RESULT)
  if(ONDA_GIT_RESULT EQUAL 0 AND ONDA_GIT_COMMIT_OUT)
    set(ONDA_GIT_COMMIT "${ONDA_GIT_COMMIT_OUT}")
  endif()
endif()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
