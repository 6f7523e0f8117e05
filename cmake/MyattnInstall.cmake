# Install rules: the public headers, libmyattn (static by default, shared with
# BUILD_SHARED_LIBS=ON), the CMake package `myattn` (target myattn::myattn) and myattn.pc.
# The CLI installs itself (tools/CMakeLists.txt). Included from the top-level CMakeLists.txt
# when MYATTN_INSTALL is ON.
include(CMakePackageConfigHelpers)

set(MYATTN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/myattn
    CACHE STRING "Where the CMake package goes, relative to the prefix")
set(MYATTN_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where myattn.pc goes, relative to the prefix")

# The per-ISA kernels are objects inside libmyattn itself (src/CMakeLists.txt): nothing else to
# install, and a consumer never sees an ISA flag.
install(TARGETS myattn EXPORT myattnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers only: they include nothing but the standard library and each other.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/myattn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")

install(EXPORT myattnTargets NAMESPACE myattn:: DESTINATION ${MYATTN_INSTALL_CMAKEDIR})
if(BUILD_SHARED_LIBS)
  set(MYATTN_LIBRARY_KIND shared)
else()
  set(MYATTN_LIBRARY_KIND static)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/myattnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/myattnConfig.cmake
                              INSTALL_DESTINATION ${MYATTN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/myattnConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/myattnConfig.cmake ${PROJECT_BINARY_DIR}/myattnConfigVersion.cmake
        DESTINATION ${MYATTN_INSTALL_CMAKEDIR})

# myattn.pc locates the prefix from its own directory (${pcfiledir}), so it stays right for
# `cmake --install --prefix`, DESTDIR and a moved tree, as the CMake package does.
if(IS_ABSOLUTE "${MYATTN_INSTALL_PKGCONFIGDIR}")
  set(MYATTN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH MYATTN_PC_PREFIX "/p/${MYATTN_INSTALL_PKGCONFIGDIR}" "/p")
  string(REGEX REPLACE "/$" "" MYATTN_PC_PREFIX "${MYATTN_PC_PREFIX}")
  set(MYATTN_PC_PREFIX "\${pcfiledir}/${MYATTN_PC_PREFIX}")
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(MYATTN_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(MYATTN_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
# What linking libmyattn.a pulls in besides the C++ runtime (pkg-config --static): TBB, which
# Debian ships only shared and describes in tbb.pc; and the threads library (thread_local
# scratch, std::call_once: in libc since glibc 2.34, a separate libpthread before).
set(MYATTN_PC_REQUIRES_PRIVATE "")
if(MYATTN_WITH_TBB)
  set(MYATTN_PC_REQUIRES_PRIVATE "Requires.private: tbb")
endif()
set(MYATTN_PC_LIBS_PRIVATE "-lpthread")
if(BUILD_SHARED_LIBS)
  set(MYATTN_PC_HOW_TO_LINK "# Link libmyattn.so with: c++ -std=c++20 app.cpp $(pkg-config --cflags --libs myattn)\n\
# (the shared library brings its own dependencies, so no static link flags are needed).")
else()
  set(MYATTN_PC_HOW_TO_LINK "# Link libmyattn.a with: c++ -std=c++20 app.cpp $(pkg-config --cflags --libs --static myattn)\n\
# (--static adds Requires.private and Libs.private, which a static library needs).")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/myattn.pc.in ${PROJECT_BINARY_DIR}/myattn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/myattn.pc DESTINATION ${MYATTN_INSTALL_PKGCONFIGDIR})
# The terms of use travel with the library (Debian's place for them).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
