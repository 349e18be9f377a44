// boo-driver: the files and folders a run writes, checked before any command
// runs: a run never overwrites one of its inputs, never writes through a
// symbolic link, and says which existing file it replaces.
#pragma once

#include <string>

#include "boo/status.hpp"
#include "driver_options.hpp"

namespace boo::driver {

/// --csv and --trace must name files (not folders, not symbolic links, not
/// the --commands-file, not each other) in folders that exist and can be
/// written; --dump a folder (or a path to create), empty unless --dump-append.
/// Appends to `notes` a line per existing file a run replaces.
Status check_outputs(const DriverOptions& opts, std::string& notes);

/// A command's --dump folder: OK when it is absent or a real folder; an error
/// when it is a symbolic link or anything else (files are never written through it).
Status check_dump_entry(const std::string& dir);

}  // namespace boo::driver
