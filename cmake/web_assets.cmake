# kbench_web: vega, vega-lite and vega-embed, installed by `npm ci` from
# web/package-lock.json into the build dir and embedded into kbench (through
# kbench_report; never the agent). docs/reports.md, "HTML pages", says why these.
find_program(KBENCH_NPM npm)
if(NOT KBENCH_NPM)
  message(FATAL_ERROR "kbench: npm not found: the HTML reports inline vega, vega-lite and vega-embed from the npm registry at build time (scripts/install-deps.sh installs nodejs and npm)")
endif()

set(web_source_dir ${CMAKE_SOURCE_DIR}/web)
set(web_dir ${CMAKE_BINARY_DIR}/web)
file(READ ${web_source_dir}/package.json web_package_json)
foreach(library vega vega-lite vega-embed)
  string(JSON version ERROR_VARIABLE json_error GET "${web_package_json}" dependencies ${library})
  # An exact version, so that library_versions() names what is inlined (the
  # lock pins the dependencies' dependencies).
  if(json_error OR NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "kbench: ${web_source_dir}/package.json: dependencies.${library} must be an exact version like 6.4.0, not '${version}'")
  endif()
  string(REPLACE "-" "_" variable ${library})
  set(web_${variable}_version ${version})
  set(web_${variable}_js ${web_dir}/node_modules/${library}/build/${library}.min.js)
endforeach()

# npm gives the installed files their packages' old timestamps, so the build
# follows a stamp npm-ci.sh touches, not the files.
set(web_stamp ${web_dir}/node_modules/.kbench-installed)
add_custom_command(
  OUTPUT ${web_stamp}
  BYPRODUCTS ${web_vega_js} ${web_vega_lite_js} ${web_vega_embed_js}
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/npm-ci.sh ${web_source_dir} ${web_dir}
  DEPENDS ${web_source_dir}/package.json ${web_source_dir}/package-lock.json ${CMAKE_SOURCE_DIR}/scripts/npm-ci.sh
  COMMENT "npm ci: vega ${web_vega_version}, vega-lite ${web_vega_lite_version}, vega-embed ${web_vega_embed_version}"
  VERBATIM)

configure_file(${CMAKE_SOURCE_DIR}/cmake/web_assets.cpp.in ${web_dir}/web_assets.cpp @ONLY)
set_source_files_properties(${web_dir}/web_assets.cpp PROPERTIES OBJECT_DEPENDS ${web_stamp})
add_library(kbench_web STATIC ${web_dir}/web_assets.cpp ${web_stamp})
target_include_directories(kbench_web PUBLIC ${CMAKE_SOURCE_DIR}/src)
