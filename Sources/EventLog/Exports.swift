// The payload codec is a module of its own (PayloadCoding), but its public types are part of
// EventLog's API: an app's `EventPayload.init(binary:)` reads with `BinaryReader`, and
// `BinaryEncoder`, `PayloadJSONEncoder` and the like stay in reach of a file that imports
// EventLog alone, as they were before the codec moved out.
@_exported import PayloadCoding
