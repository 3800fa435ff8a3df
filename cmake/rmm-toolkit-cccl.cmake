# SPDX-License-Identifier: Apache-2.0
# CMake >= 4 lists the toolkit's own CCCL (<toolkit>/include/cccl, 3.0.1) among the toolkit's include
# folders and its imported targets' include directories, where it would shadow the CCCL 3.5 that rmm
# needs for any target naming them. Used by the build and by the installed package's config.
function(rmm_drop_toolkit_cccl)
  set(dirs ${CUDAToolkit_INCLUDE_DIRS})
  list(FILTER dirs EXCLUDE REGEX "/cccl/?$")
  set(CUDAToolkit_INCLUDE_DIRS "${dirs}" PARENT_SCOPE)
  get_property(imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(target IN LISTS imported)
    if(target MATCHES "^CUDA::")
      get_target_property(target_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
      if(target_dirs)
        list(FILTER target_dirs EXCLUDE REGEX "/cccl/?$")
        set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${target_dirs}")
      endif()
    endif()
  endforeach()
endfunction()
