extension AppSchema {
  /// How an app's stream IDs are shown and read back: its spelling of them in every output.
  ///
  /// Every output writes UUIDs in lower case; an app whose stream names hold a UUID in another
  /// case (the example's booking streams, `booking-<UPPER UUID>` as stored) shows them lower-cased
  /// and reads either case back, so that an `import` restores the stored names and an `export` of
  /// the result gives the same bytes.
  public struct StreamNames: Sendable {
    /// The name shown for a stored stream.
    public var displayed: @Sendable (StreamID) -> String
    /// The stored stream of a name as shown or typed.
    public var stored: @Sendable (String) -> StreamID

    /// Names with the given spellings.
    /// - Parameters:
    ///   - displayed: the name shown for a stored stream; a stream it does not concern is shown as
    ///     stored (its `rawValue`).
    ///   - stored: the stored stream of a name as shown or typed; a name it does not concern is the
    ///     stream of that name.
    public init(
      displayed: @escaping @Sendable (StreamID) -> String, stored: @escaping @Sendable (String) -> StreamID
    ) {
      self.displayed = displayed
      self.stored = stored
    }

    /// Names shown and read as stored.
    public static let verbatim = StreamNames(displayed: { $0.rawValue }, stored: { StreamID($0) })

    /// The spellings of several apps' modules in one: for each stream, the first of `names` that
    /// spells it otherwise than as stored decides; a stream none of them concerns is shown and read
    /// as stored.
    /// - Parameter names: the modules' spellings, in order.
    /// - Returns: `names[0]` itself when there is only one.
    public static func combining(_ names: [StreamNames]) -> StreamNames {
      if names.count == 1 { return names[0] }
      return StreamNames(
        displayed: { stream in
          for spelling in names {
            let shown = spelling.displayed(stream)
            if shown != stream.rawValue { return shown }
          }
          return stream.rawValue
        },
        stored: { name in
          for spelling in names {
            let stream = spelling.stored(name)
            if stream.rawValue != name { return stream }
          }
          return StreamID(name)
        })
    }
  }
}
