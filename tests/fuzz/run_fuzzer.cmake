# ctest driver: copy the seed corpus to a fresh work folder (the fuzzer adds to its corpus) and
# run the fuzzer for SECONDS (with the dictionary DICT when that file exists); a crash, sanitizer
# report or limit hit fails the test. The seed is fixed so that the test command is reproducible;
# the long runs in docs/fuzzing.md use random seeds.
foreach(v FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzzer.cmake: ${v} is not set")
  endif()
endforeach()
if(NOT EXISTS ${FUZZER})
  message(FATAL_ERROR "fuzzer ${FUZZER} was not built (build the edge_fuzzers target)")
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
if(EXISTS ${SEEDS})
  file(COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)
endif()
set(dict_arg)
if(DEFINED DICT AND EXISTS ${DICT})
  set(dict_arg -dict=${DICT})
endif()
execute_process(
  COMMAND ${FUZZER} ${dict_arg} -seed=1 -max_total_time=${SECONDS} -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${rc}); reproducer in ${WORK}/artifacts")
endif()
