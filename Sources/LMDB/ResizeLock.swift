#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A readers-writer lock that keeps every transaction of this process out while the map is resized.
///
/// LMDB allows `mdb_env_set_mapsize` only while the calling process has no active transaction.
/// Every transaction holds the lock shared for its lifetime; growing the map takes it exclusively.
/// Writers are preferred, so that a stream of short readers cannot starve a resize.
final class ResizeLock: @unchecked Sendable {
  // @unchecked Sendable: the pthread rwlock is designed to be used from many threads; its storage
  // is allocated once, never moved and freed only in deinit, when no thread can hold it.
  private let lock: UnsafeMutablePointer<pthread_rwlock_t>

  init() {
    lock = .allocate(capacity: 1)
    #if os(Linux)
      var attributes = pthread_rwlockattr_t()
      pthread_rwlockattr_init(&attributes)
      pthread_rwlockattr_setkind_np(
        &attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
      pthread_rwlock_init(lock, &attributes)
      pthread_rwlockattr_destroy(&attributes)
    #else
      pthread_rwlock_init(lock, nil)
    #endif
  }

  deinit {
    pthread_rwlock_destroy(lock)
    lock.deallocate()
  }

  func withShared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_rdlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body()
  }

  func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_wrlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body()
  }
}
