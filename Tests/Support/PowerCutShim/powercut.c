// The power-cut shim (include/powercut.h says what it logs and how). Each hooked call resolves the
// C library's own function with dlsym(RTLD_NEXT), performs it, and when it concerns a watched
// file appends a record to the log. One lock serializes the watched operations and the log, so a
// record is in the log in the order the operation happened in this process.
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE

#include "powercut.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 4096
#define MAX_MAPS 64

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_open_2)(const char *, int);
static int (*real_open64_2)(const char *, int);
static int (*real_close)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void *, size_t, int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_munmap)(void *, size_t);
static off_t (*real_lseek)(int, off_t, int);
static ssize_t (*real_read)(int, void *, size_t);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int enabled;
static char watched[PATH_MAX];
static char log_path[PATH_MAX];
static int log_fd = -1;
static long long stop_after = -1;
static long long records = -1;  // counted from the log on first use

// The watched descriptors of this process: their file's path (NULL: not watched) and O_DSYNC.
static char *fd_path[MAX_FDS];
static int fd_dsync[MAX_FDS];

static struct {
  uintptr_t start;
  size_t length;
  char *path;
} maps[MAX_MAPS];

#define RESOLVE(name, symbol) name = dlsym(RTLD_NEXT, symbol)

static void initialize(void) {
  RESOLVE(real_write, "write");
  RESOLVE(real_pwrite, "pwrite");
  RESOLVE(real_pwrite64, "pwrite64");
  RESOLVE(real_writev, "writev");
  RESOLVE(real_pwritev, "pwritev");
  RESOLVE(real_pwritev64, "pwritev64");
  RESOLVE(real_pwritev2, "pwritev2");
  RESOLVE(real_open, "open");
  RESOLVE(real_open64, "open64");
  RESOLVE(real_openat, "openat");
  RESOLVE(real_openat64, "openat64");
  RESOLVE(real_open_2, "__open_2");
  RESOLVE(real_open64_2, "__open64_2");
  RESOLVE(real_close, "close");
  RESOLVE(real_ftruncate, "ftruncate");
  RESOLVE(real_ftruncate64, "ftruncate64");
  RESOLVE(real_fsync, "fsync");
  RESOLVE(real_fdatasync, "fdatasync");
  RESOLVE(real_msync, "msync");
  RESOLVE(real_mmap, "mmap");
  RESOLVE(real_mmap64, "mmap64");
  RESOLVE(real_munmap, "munmap");
  RESOLVE(real_lseek, "lseek");
  RESOLVE(real_read, "read");
  const char *dir = getenv("EVENTLOG_POWERCUT_DIR");
  const char *log = getenv("EVENTLOG_POWERCUT_LOG");
  if (!dir || !log || !*dir || !*log || strlen(dir) >= PATH_MAX || strlen(log) >= PATH_MAX) return;
  strcpy(watched, dir);
  size_t length = strlen(watched);
  while (length > 1 && watched[length - 1] == '/') watched[--length] = 0;
  strcpy(log_path, log);
  const char *stop = getenv("EVENTLOG_POWERCUT_STOP_AFTER");
  if (stop && *stop) stop_after = atoll(stop);
  enabled = 1;
}

static void setup(void) { pthread_once(&once, initialize); }

// Writes all of `length` bytes to the log, or gives up on an error (the test then finds the log
// short of what the file holds).
static void log_bytes(const void *bytes, size_t length) {
  const char *cursor = bytes;
  while (length > 0) {
    ssize_t written = real_write(log_fd, cursor, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    cursor += written;
    length -= (size_t)written;
  }
}

// Counts the records already in the log (the processes before this one), once. Under the lock.
static void count_records(void) {
  if (records >= 0) return;
  records = 0;
  int fd = real_open(log_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  unsigned char header[40];
  for (;;) {
    size_t have = 0;
    while (have < sizeof header) {
      ssize_t got = real_read(fd, header + have, sizeof header - have);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      have += (size_t)got;
    }
    if (have < sizeof header) break;
    uint32_t kind, path_length;
    uint64_t length;
    memcpy(&kind, header + 4, 4);
    memcpy(&length, header + 24, 8);
    memcpy(&path_length, header + 32, 4);
    off_t skip = (off_t)path_length + (kind == POWERCUT_WRITE ? (off_t)length : 0);
    if (real_lseek(fd, skip, SEEK_CUR) < 0) break;
    records += 1;
  }
  real_close(fd);
}

// Before a watched operation, under the lock: kills the process when the log holds the records
// STOP_AFTER asks for.
static void before_operation(void) {
  count_records();
  if (stop_after >= 0 && records >= stop_after) kill(getpid(), SIGKILL);
}

// Appends one record. Under the lock.
static void append_record(uint32_t kind, uint32_t flags, uint64_t offset, uint64_t length, const char *path,
                          const struct iovec *data, int count, size_t data_length) {
  if (log_fd < 0) {
    log_fd = real_open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log_fd < 0) return;
  }
  unsigned char header[40] = {0};
  uint32_t magic = POWERCUT_MAGIC;
  int32_t pid = (int32_t)getpid();
  uint32_t path_length = (uint32_t)strlen(path);
  memcpy(header, &magic, 4);
  memcpy(header + 4, &kind, 4);
  memcpy(header + 8, &pid, 4);
  memcpy(header + 12, &flags, 4);
  memcpy(header + 16, &offset, 8);
  memcpy(header + 24, &length, 8);
  memcpy(header + 32, &path_length, 4);
  log_bytes(header, sizeof header);
  log_bytes(path, path_length);
  size_t left = data_length;
  for (int i = 0; i < count && left > 0; i++) {
    size_t part = data[i].iov_len < left ? data[i].iov_len : left;
    log_bytes(data[i].iov_base, part);
    left -= part;
  }
  records += 1;
}

// The absolute path of `path` (opened relative to `dirfd`) when it names `data.mdb` in the
// watched directory, else NULL. The caller frees it.
static char *watched_path(int dirfd, const char *path) {
  if (!enabled || !path) return NULL;
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  if (strcmp(name, "data.mdb") != 0) return NULL;
  char directory[PATH_MAX];
  size_t dir_length = slash ? (size_t)(slash - path) : 0;
  if (dir_length >= PATH_MAX) return NULL;
  if (slash && path[0] == '/') {
    memcpy(directory, path, dir_length);
    directory[dir_length] = 0;
    if (dir_length == 0) strcpy(directory, "/");
  } else {
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return NULL;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t got = readlink(link, base, sizeof base - 1);
      if (got < 0) return NULL;
      base[got] = 0;
    }
    if (strlen(base) + 1 + dir_length >= PATH_MAX) return NULL;
    strcpy(directory, base);
    if (dir_length > 0) {
      strcat(directory, "/");
      strncat(directory, path, dir_length);
    }
  }
  char resolved[PATH_MAX];
  if (!realpath(directory, resolved) || strcmp(resolved, watched) != 0) return NULL;
  char *full = malloc(strlen(resolved) + sizeof "/data.mdb");
  if (!full) return NULL;
  strcpy(full, resolved);
  strcat(full, "/data.mdb");
  return full;
}

// Before an open: the watched file's absolute path (the lock then held, and the process killed
// when STOP_AFTER says), or NULL.
static char *open_begin(int dirfd, const char *path) {
  char *full = watched_path(dirfd, path);
  if (!full) return NULL;
  pthread_mutex_lock(&lock);
  before_operation();
  return full;
}

// After an open of the watched file `full`: watches `fd` and logs the open when it succeeded.
static void open_end(int fd, char *full, int flags) {
  if (!full) return;
  int saved = errno;
  if (fd >= 0 && fd < MAX_FDS) {
    free(fd_path[fd]);
    fd_path[fd] = full;
    fd_dsync[fd] = (flags & O_DSYNC) != 0;
    append_record(POWERCUT_OPEN, (uint32_t)flags, 0, 0, full, NULL, 0, 0);
  } else {
    free(full);
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
}

// Read without the lock: a descriptor is watched from its open to its close, and a process does
// not use a descriptor it is closing on another thread.
static int is_watched(int fd) { return enabled && fd >= 0 && fd < MAX_FDS && fd_path[fd] != NULL; }

static int mode_of(int flags, va_list arguments) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
  setup();
  va_list arguments;
  va_start(arguments, flags);
  int mode = mode_of(flags, arguments);
  va_end(arguments);
  char *full = open_begin(AT_FDCWD, path);
  int fd = real_open(path, flags, mode);
  open_end(fd, full, flags);
  return fd;
}

int open64(const char *path, int flags, ...) {
  setup();
  va_list arguments;
  va_start(arguments, flags);
  int mode = mode_of(flags, arguments);
  va_end(arguments);
  char *full = open_begin(AT_FDCWD, path);
  int fd = real_open64(path, flags, mode);
  open_end(fd, full, flags);
  return fd;
}

int openat(int dirfd, const char *path, int flags, ...) {
  setup();
  va_list arguments;
  va_start(arguments, flags);
  int mode = mode_of(flags, arguments);
  va_end(arguments);
  char *full = open_begin(dirfd, path);
  int fd = real_openat(dirfd, path, flags, mode);
  open_end(fd, full, flags);
  return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) {
  setup();
  va_list arguments;
  va_start(arguments, flags);
  int mode = mode_of(flags, arguments);
  va_end(arguments);
  char *full = open_begin(dirfd, path);
  int fd = real_openat64(dirfd, path, flags, mode);
  open_end(fd, full, flags);
  return fd;
}

int __open_2(const char *path, int flags) {
  setup();
  char *full = open_begin(AT_FDCWD, path);
  int fd = real_open_2(path, flags);
  open_end(fd, full, flags);
  return fd;
}

int __open64_2(const char *path, int flags) {
  setup();
  char *full = open_begin(AT_FDCWD, path);
  int fd = real_open64_2(path, flags);
  open_end(fd, full, flags);
  return fd;
}

int close(int fd) {
  setup();
  if (is_watched(fd)) {
    pthread_mutex_lock(&lock);
    free(fd_path[fd]);
    fd_path[fd] = NULL;
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

// A write of `count` buffers at `offset` (-1: the descriptor's position), through `perform`.
typedef ssize_t (*write_operation)(int fd, const struct iovec *data, int count, off64_t offset, int extra);

static ssize_t watched_write(int fd, const struct iovec *data, int count, off64_t offset, int extra,
                             write_operation perform) {
  if (!is_watched(fd)) return perform(fd, data, count, offset, extra);
  pthread_mutex_lock(&lock);
  before_operation();
  off64_t at = offset >= 0 ? offset : (off64_t)real_lseek(fd, 0, SEEK_CUR);
  ssize_t written = perform(fd, data, count, offset, extra);
  int saved = errno;
  if (written > 0 && fd_path[fd]) {
    append_record(POWERCUT_WRITE, fd_dsync[fd] ? 1u : 0u, (uint64_t)at, (uint64_t)written, fd_path[fd], data, count,
                  (size_t)written);
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
  return written;
}

static ssize_t do_write(int fd, const struct iovec *data, int count, off64_t offset, int extra) {
  (void)count, (void)offset, (void)extra;
  return real_write(fd, data[0].iov_base, data[0].iov_len);
}
static ssize_t do_pwrite(int fd, const struct iovec *data, int count, off64_t offset, int extra) {
  (void)count, (void)extra;
  return real_pwrite64(fd, data[0].iov_base, data[0].iov_len, offset);
}
static ssize_t do_writev(int fd, const struct iovec *data, int count, off64_t offset, int extra) {
  (void)offset, (void)extra;
  return real_writev(fd, data, count);
}
static ssize_t do_pwritev(int fd, const struct iovec *data, int count, off64_t offset, int extra) {
  (void)extra;
  return real_pwritev64(fd, data, count, offset);
}
static ssize_t do_pwritev2(int fd, const struct iovec *data, int count, off64_t offset, int extra) {
  return real_pwritev2(fd, data, count, (off_t)offset, extra);
}

ssize_t write(int fd, const void *bytes, size_t length) {
  setup();
  struct iovec one = {(void *)bytes, length};
  return watched_write(fd, &one, 1, -1, 0, do_write);
}

ssize_t pwrite(int fd, const void *bytes, size_t length, off_t offset) {
  setup();
  struct iovec one = {(void *)bytes, length};
  return watched_write(fd, &one, 1, offset, 0, do_pwrite);
}

ssize_t pwrite64(int fd, const void *bytes, size_t length, off64_t offset) {
  setup();
  struct iovec one = {(void *)bytes, length};
  return watched_write(fd, &one, 1, offset, 0, do_pwrite);
}

ssize_t writev(int fd, const struct iovec *data, int count) {
  setup();
  return watched_write(fd, data, count, -1, 0, do_writev);
}

ssize_t pwritev(int fd, const struct iovec *data, int count, off_t offset) {
  setup();
  return watched_write(fd, data, count, offset, 0, do_pwritev);
}

ssize_t pwritev64(int fd, const struct iovec *data, int count, off64_t offset) {
  setup();
  return watched_write(fd, data, count, offset, 0, do_pwritev);
}

ssize_t pwritev2(int fd, const struct iovec *data, int count, off_t offset, int flags) {
  setup();
  // pwritev2 with offset -1 writes at the descriptor's position, as watched_write expects.
  return watched_write(fd, data, count, offset, flags, do_pwritev2);
}

// A watched operation without data: performed under the lock, logged when it succeeded.
static int watched_call(int fd, uint32_t kind, uint64_t length, int result_of_call(int fd, uint64_t length)) {
  if (!is_watched(fd)) return result_of_call(fd, length);
  pthread_mutex_lock(&lock);
  before_operation();
  int result = result_of_call(fd, length);
  int saved = errno;
  if (result == 0 && fd_path[fd]) append_record(kind, 0, 0, length, fd_path[fd], NULL, 0, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}

static int do_ftruncate(int fd, uint64_t length) { return real_ftruncate64(fd, (off64_t)length); }
static int do_fsync(int fd, uint64_t length) {
  (void)length;
  return real_fsync(fd);
}
static int do_fdatasync(int fd, uint64_t length) {
  (void)length;
  return real_fdatasync(fd);
}

int ftruncate(int fd, off_t length) {
  setup();
  return watched_call(fd, POWERCUT_TRUNCATE, (uint64_t)length, do_ftruncate);
}

int ftruncate64(int fd, off64_t length) {
  setup();
  return watched_call(fd, POWERCUT_TRUNCATE, (uint64_t)length, do_ftruncate);
}

int fsync(int fd) {
  setup();
  return watched_call(fd, POWERCUT_FSYNC, 0, do_fsync);
}

int fdatasync(int fd) {
  setup();
  return watched_call(fd, POWERCUT_FDATASYNC, 0, do_fdatasync);
}

static void *mapped(void *address, size_t length, int protection, int flags, int fd) {
  if (address == MAP_FAILED || !is_watched(fd)) return address;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_MAPS; i++) {
    if (maps[i].path) continue;
    maps[i].start = (uintptr_t)address;
    maps[i].length = length;
    maps[i].path = strdup(fd_path[fd]);
    break;
  }
  if ((protection & PROT_WRITE) && (flags & MAP_SHARED)) {
    append_record(POWERCUT_MAP, (uint32_t)flags, 0, length, fd_path[fd], NULL, 0, 0);
  }
  pthread_mutex_unlock(&lock);
  return address;
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
  setup();
  int saved;
  void *result = real_mmap(address, length, protection, flags, fd, offset);
  saved = errno;
  result = mapped(result, length, protection, flags, fd);
  errno = saved;
  return result;
}

void *mmap64(void *address, size_t length, int protection, int flags, int fd, off64_t offset) {
  setup();
  int saved;
  void *result = real_mmap64(address, length, protection, flags, fd, offset);
  saved = errno;
  result = mapped(result, length, protection, flags, fd);
  errno = saved;
  return result;
}

int munmap(void *address, size_t length) {
  setup();
  if (enabled) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_MAPS; i++) {
      if (maps[i].path && maps[i].start == (uintptr_t)address) {
        free(maps[i].path);
        maps[i].path = NULL;
      }
    }
    pthread_mutex_unlock(&lock);
  }
  return real_munmap(address, length);
}

int msync(void *address, size_t length, int flags) {
  setup();
  if (!enabled || !(flags & MS_SYNC)) return real_msync(address, length, flags);
  pthread_mutex_lock(&lock);
  const char *path = NULL;
  for (int i = 0; i < MAX_MAPS; i++) {
    uintptr_t at = (uintptr_t)address;
    if (maps[i].path && at >= maps[i].start && at < maps[i].start + maps[i].length) path = maps[i].path;
  }
  if (path) before_operation();
  int result = real_msync(address, length, flags);
  int saved = errno;
  if (result == 0 && path) append_record(POWERCUT_MSYNC, 0, 0, length, path, NULL, 0, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}
