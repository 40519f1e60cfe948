# The server's layers, enforced by the build. Each layer's headers are reached as "NAME/x.hpp"
# through a folder of the build tree that holds one link, NAME -> the layer's source folder, and
# that folder is on the include path of the layer's target and of the targets that link it, and
# of no other. So an include that points up the layers (hosting including "rpc/...") finds no
# file and does not build, where one include root for all of server/ would let it through.
#   ecsd_layer_folder(TARGET NAME FOLDER)      "NAME/x.hpp" for every header in FOLDER
#   ecsd_layer_files(TARGET FILE...)           "FILE" for single headers of a folder's root
function(ecsd_layer_folder target name folder)
  set(root ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${folder} ${root}/${name} SYMBOLIC)
  target_include_directories(${target} PUBLIC ${root})
endfunction()

function(ecsd_layer_files target)
  set(root ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${root})
  foreach(file IN LISTS ARGN)
    get_filename_component(parent ${root}/${file} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${file} ${root}/${file} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC ${root})
endfunction()
