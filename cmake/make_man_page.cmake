# Writes capguard.1 with help2man from the real `capguard --help`, each subcommand's --help
# and `capguard rules`. Usage: cmake -DCAPGUARD=... -DHELP2MAN=... -DOUTPUT=... -P this file
cmake_minimum_required(VERSION 3.25)

# capguard prints its argv[0] in every "Usage:" line, so it is run by its plain name, found
# through PATH, never as build/capguard: the man page must not show the build directory.
get_filename_component(capguard_dir ${CAPGUARD} DIRECTORY)
get_filename_component(capguard_name ${CAPGUARD} NAME)
set(run_plain ${CMAKE_COMMAND} -E env "PATH=${capguard_dir}:$ENV{PATH}")

# Text for a help2man include section, shown verbatim: roff escapes doubled, lines that roff
# would read as requests protected.
function(verbatim text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

set(include_text "")
foreach(command run report rules explain suppressions)
  execute_process(COMMAND ${run_plain} ${capguard_name} ${command} --help OUTPUT_VARIABLE help
                  RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "capguard ${command} --help failed")
  endif()
  verbatim("${help}" body)
  string(APPEND include_text ".SS \"capguard ${command}\"\n${body}")
endforeach()
set(include_text "[COMMANDS]\n${include_text}")

execute_process(COMMAND ${run_plain} ${capguard_name} rules OUTPUT_VARIABLE rules RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "capguard rules failed")
endif()
verbatim("${rules}" body)
string(APPEND include_text "[RULES]\n`capguard explain RULE` prints what a rule means and its fix.\n"
       ".PP\n${body}")
# ENVIRONMENT: the rows of util/env.def, the one list of CAPGUARD_* variables.
if(ENV_DEF)
  file(STRINGS ${ENV_DEF} env_rows REGEX "^CAPGUARD_ENV\\(\"")
  string(APPEND include_text "[ENVIRONMENT]\n")
  foreach(row IN LISTS env_rows)
    if(NOT row MATCHES "^CAPGUARD_ENV\\(\"([A-Z0-9_]+)\", \"([^\"]*)\", \"([^\"]*)\", \"([^\"]*)\"\\)$")
      message(FATAL_ERROR "${ENV_DEF}: a row is not CAPGUARD_ENV(\"NAME\", \"...\", \"...\", \"...\"): ${row}")
    endif()
    string(APPEND include_text ".TP\n.B ${CMAKE_MATCH_1}\n${CMAKE_MATCH_4} (read by ${CMAKE_MATCH_2}; default: ${CMAKE_MATCH_3})\n")
  endforeach()
endif()
string(APPEND include_text
       "[EXIT STATUS]\n0: nothing at or above --fail-on (run: the program's own status);\n"
       "1: findings at or above --fail-on; 2: usage error; 3: capguard could not attach (run) "
       "or a trace could not be read (report).\n"
       "[SEE ALSO]\nThe README in /usr/share/doc/capguard (or the repository) has the full "
       "documentation.\n")

get_filename_component(dir ${OUTPUT} DIRECTORY)
file(WRITE ${dir}/capguard.h2m "${include_text}")
execute_process(
  COMMAND ${run_plain} ${HELP2MAN} --no-info --no-discard-stderr --section=1
          "--name=finds the mistakes that break CUDA stream capture"
          --include=${dir}/capguard.h2m --output=${OUTPUT} ${capguard_name}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man failed")
endif()
