// Nothing of its own: the file each host of Qt's precompiled headers compiles
// (CMakeLists.txt, payops_qt_headers_host).
