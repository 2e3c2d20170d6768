// `eventlog-stress`: a process that appends, reads or holds a reader on an event store, for the
// crash, map-growth, dead-reader and concurrency tests in `Tests/ReliabilityTests`.
import Foundation

let status = await StressProgram.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
