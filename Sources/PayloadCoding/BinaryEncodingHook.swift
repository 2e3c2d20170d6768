/// The caller's code for one type, which a run of the encoder hands each value of that type to by
/// its identity, with no dynamic cast: EventLog's, for `Personal<String>` (a new event's personal
/// values, which it seals), a type the codec cannot name.
///
/// It exists for speed: the generic path (the `as? any BinaryEncodingInterception` cast, then the
/// generic `Personal`'s enum payload and tuple metadata) cost about 1 µs a value, 16% of a sealed
/// booking's append (`perf`, `append.batched`). The hook is a class, so that it also holds what its
/// run gathers (the values to seal); a run without one (``BinaryEncoder/encode(_:)``) encodes those
/// values by the generic path, to the same bytes.
package protocol BinaryEncodingHook: AnyObject {
  /// Encodes the value at `value` (an instance of the type the run hands this hook) into `state`.
  /// - Parameters:
  ///   - value: the value, bound to its type (the hook knows which; the codec does not).
  ///   - state: the run's output and coding path.
  ///   - field: the value's name when the caller knows it without the coding path (a field of the
  ///     payload itself: its key); `nil`: the coding path names it.
  /// - Throws: what the value's encoding throws.
  func encode(_ value: UnsafeRawPointer, into state: BinaryEncodingState, field: String?) throws
}
