// The kinds of coder a type can tell itself handed to, and the kind of field a type can say it
// is, declared here so that a type of another module can adopt them without the codec knowing it.
//
// EventLog's `Personal` is the one such type: it writes and reads its stored bytes as they are in
// the binary format, `Data` to the layout observer and probe, and its value opened to the audit
// commands' JSON, and a recorded layout gives it the kind ``PayloadLayout/Kind/personal``. The
// codec marks its coders with these protocols and asks for ``PersonalLayoutValue`` by type; it
// never names `Personal` (which needs the keyring, in EventLog).

/// `BinaryDecoder`'s decoder: a personal value reads its stored bytes as they are.
package protocol BinaryDecoding {}

/// The decoder that learns a type's layout (``PayloadLayout/init(probing:)``): a personal value
/// is `Data` to it (the probe notes a personal field's kind, `personal`, by its type).
package protocol PayloadLayoutProbing {}

/// `BinaryEncoder`'s encoder: a personal value writes its stored bytes as they are.
package protocol BinaryEncoding {}

/// The encoder of the JSON the audit commands show rows in (``PayloadJSONEncoder``): it shows a
/// personal value opened when EventLog's `SubjectKeyring.shown` is set.
package protocol PersonalValueShowing {}

/// A personal value, seen through a protocol by the layout observer and probe: its kind is
/// ``PayloadLayout/Kind/personal`` whatever the type it holds.
package protocol PersonalLayoutValue {
  /// A value for the probe to hand back (``PayloadLayout/init(probing:)``): empty text in clear.
  static var layoutPlaceholder: Self { get }
}
