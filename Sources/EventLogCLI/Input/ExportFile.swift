import EventLog
import Foundation
import Sodium

/// An export read back: its event lines, parsed as `import` stores them, and its manifest, with
/// every check that can be made without an environment (`import`, `verify --export`).
struct ExportFile {
  /// One event line: its number in the file, from 1, and what it says.
  struct Entry {
    var number: Int
    var line: ParsedLine
  }

  /// A problem found, with the line it concerns when there is one.
  struct Problem: CustomStringConvertible {
    var line: Int?
    var problem: String

    var description: String { line.map { "line \($0): \(problem)" } ?? problem }
  }

  var entries: [Entry] = []
  /// The manifest (the last line), when the file has one.
  var manifest: ExportManifest?
  /// The manifest's line number.
  var manifestLine: Int?
  /// BLAKE2b-256 of the event lines, each with its newline, as the file holds them.
  var digest: [UInt8] = []

  /// Reads `text` (an export), parsing each event line as `import` stores it.
  /// - Throws: ``CommandFailure`` naming the line and the field of a line that does not read, or
  ///   a line after the manifest.
  static func read(
    _ text: String, eventTypes: EventTypeRegistry, streams: AppSchema.StreamNames,
    progress: ProgressReporter? = nil
  ) throws -> ExportFile {
    // Split on the byte: splitting the String splits on Characters, which is several times
    // slower and keeps "\r\n" (one Character) together.
    let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .map(Substring.init)
    // The layouts the file carries, line by line; only those are recorded (not ones this build
    // would learn from its types), so that `export` gives the same lines again.
    var payloads = PayloadTranscoder(eventTypes: eventTypes)
    payloads.infersLayouts = false
    var file = ExportFile()
    let hasher = BLAKE2b256.Hasher()
    for (index, line) in lines.enumerated() {
      if line.isEmpty && index == lines.count - 1 { break }
      let number = index + 1
      if let manifestLine = file.manifestLine {
        throw CommandFailure("line \(number): a line after the manifest (line \(manifestLine))")
      }
      if line.hasPrefix(#"{"manifest":"#) {
        let node: JSONNode
        do {
          node = try JSONNode.parse(Data(line.utf8))
        } catch {
          throw CommandFailure("line \(number) (the manifest): not valid JSON: \(error.reason)")
        }
        file.manifest = try ExportManifest.parse(node, line: number)
        file.manifestLine = number
        continue
      }
      let offset = text.utf8.distance(from: text.utf8.startIndex, to: line.startIndex)
      let parsed = try EventJSON.parse(
        line, number: number, offset: offset, payloads: &payloads, streams: streams)
      file.entries.append(Entry(number: number, line: parsed))
      hasher.update(line.utf8)
      hasher.update(CollectionOfOne(UInt8(ascii: "\n")))
      if number % 4_096 == 0 { progress?.update(completed: UInt64(number), total: UInt64(lines.count)) }
    }
    file.digest = hasher.finalize()
    return file
  }

  /// Every line checked against its record's chain value (and the value before it), each run of
  /// lines against the log it came from, and the whole against the manifest.
  /// - Returns: the problems found, in the file's order (none for an export as `export` wrote it).
  func problems() -> [Problem] {
    var problems: [Problem] = []
    var previous: Entry?
    for entry in entries {
      let line = entry.line
      guard let chain = line.chain else {
        problems.append(
          Problem(line: entry.number, problem: "no 'chain' value (written by a build before format 5)"))
        previous = entry
        continue
      }
      // The value the record was chained after: said on the line, or the line before's when
      // that line is the record before.
      let follows = previous.map { $0.line.sequence + 1 == line.sequence } ?? false
      var after: ChainValue?
      if let said = line.previousChain {
        if follows, let before = previous?.line.chain, before != said {
          problems.append(
            Problem(
              line: entry.number,
              problem:
                "its 'previousChain' is not the chain value of event \(line.sequence - 1) on the line before")
          )
        }
        after = said
      } else if follows {
        after = previous?.line.chain
      } else if line.sequence == 1 {
        after = .zero
      } else {
        problems.append(
          Problem(
            line: entry.number,
            problem:
              "event \(line.sequence) does not follow the line before"
              + (previous.map { " (event \($0.line.sequence))" } ?? "")
              + " and says no 'previousChain': a line before it was removed"))
      }
      if let after, line.recomputedChain(after: after) != chain {
        problems.append(
          Problem(
            line: entry.number,
            problem:
              "event \(line.sequence) (id \(line.event.id.lowercasedString)) does not match its chain value: the line was "
              + "changed after the export, or a line before it"))
      }
      previous = entry
    }
    guard let manifest else {
      problems.append(Problem(line: nil, problem: "the file has no manifest (its last line)"))
      return problems
    }
    let at = manifestLine
    if manifest.events != entries.count {
      problems.append(
        Problem(
          line: at, problem: "the manifest counts \(manifest.events) events; the file holds \(entries.count)")
      )
    }
    if manifest.digest != digest {
      problems.append(
        Problem(
          line: at,
          problem:
            "the event lines do not match the manifest's digest: a line was changed, added or removed after the export"
        ))
    }
    if manifest.first != entries.first?.line.sequence || manifest.last != entries.last?.line.sequence {
      problems.append(
        Problem(
          line: at,
          problem:
            "the manifest says events \(manifest.first.map(String.init) ?? "none") to "
            + "\(manifest.last.map(String.init) ?? "none"); the file holds \(entries.first.map { String($0.line.sequence) } ?? "none") "
            + "to \(entries.last.map { String($0.line.sequence) } ?? "none")"))
    }
    if manifest.complete {
      // The whole log: event 1 to the head, every one, ending on the head's chain value.
      if let last = entries.last?.line, last.sequence != manifest.head || last.chain != manifest.headChain {
        problems.append(
          Problem(
            line: at,
            problem:
              "the manifest's head is event \(manifest.head) \(manifest.headChain?.hex ?? "-"); the last line is event "
              + "\(last.sequence) \(last.chain?.hex ?? "-")"))
      }
      for (index, entry) in entries.enumerated() where entry.line.sequence != UInt64(index + 1) {
        problems.append(
          Problem(
            line: entry.number,
            problem:
              "the export says it holds the whole log, but this line is event \(entry.line.sequence), not \(index + 1)"
          ))
        break
      }
    }
    return problems
  }
}
