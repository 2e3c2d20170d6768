import Foundation

/// The size in bytes of `data.mdb` in the LMDB environment at `path`, or 0 when there is none.
public func dataFileSize(_ path: String) -> Int {
  let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
  return (attributes?[.size] as? NSNumber)?.intValue ?? 0
}
