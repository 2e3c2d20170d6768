// The power-cut shim: a library loaded with LD_PRELOAD into a process (the built `eventlog`) that
// logs, for every file named `data.mdb` in one directory, each operation that decides what a power
// cut keeps of it, and that can stop the process (SIGKILL, before the operation) at a given record.
// It exports no API: TestKit's `PowerCutLog` reads the log and rebuilds the file a cut leaves.
//
// Environment (read once per process):
//   EVENTLOG_POWERCUT_LOG         the log file, appended to (created 0600 when missing).
//   EVENTLOG_POWERCUT_DIR         the watched directory, as an absolute path without symbolic links.
//   EVENTLOG_POWERCUT_STOP_AFTER  optional: once the log holds this many records, the next logged
//                                 operation kills the process (SIGKILL) before it is performed.
// Without the first two the shim does nothing. The processes logging to one log must run one
// after another (the record count for STOP_AFTER is read from the log when a process starts).
//
// The log is a sequence of records, each a 40-byte header (little-endian) followed by the path
// (`path_length` bytes, no NUL) and, for a write, the `length` bytes written:
//   uint32 magic ('PCUT' = 0x54554350), uint32 kind, int32 pid, uint32 flags,
//   uint64 offset, uint64 length, uint32 path_length, uint32 reserved (0).
// Kinds:
//   1 open      flags: the open flags (O_DSYNC, O_SYNC, O_CREAT, ...); offset, length: 0
//   2 write     pwrite, pwritev, write, writev: `length` bytes at `offset`; flags bit 0: the
//               descriptor was opened with O_DSYNC (or O_SYNC)
//   3 truncate  ftruncate to `length`
//   4 fsync     5 fdatasync     6 msync (MS_SYNC of a map of the file)
//   7 map       a shared writable mmap of the file: its writes bypass the log (the reader refuses
//               such a log)
// Only operations that succeeded are logged, with what they wrote (a short write: its part).
#ifndef POWERCUT_H
#define POWERCUT_H

#define POWERCUT_MAGIC 0x54554350u

enum powercut_kind {
  POWERCUT_OPEN = 1,
  POWERCUT_WRITE = 2,
  POWERCUT_TRUNCATE = 3,
  POWERCUT_FSYNC = 4,
  POWERCUT_FDATASYNC = 5,
  POWERCUT_MSYNC = 6,
  POWERCUT_MAP = 7,
};

#endif
