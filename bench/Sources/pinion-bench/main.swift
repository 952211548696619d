// pinion-bench: the in-process benchmarks and fixture generators that `bench/run` drives.

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func argument(_ index: Int) -> String {
    guard index < arguments.count else { fail("usage: see bench/README.md") }
    return arguments[index]
}

func number(_ index: Int) -> Int {
    guard let value = Int(argument(index)), value > 0 else { fail("\(argument(index)) is not a positive number") }
    return value
}

switch arguments.first {
case "gen": generateManifests(directory: argument(1))
case "history": generateHistory(directory: argument(1), versions: number(2))
case "refresh": benchRefresh(directory: argument(1), repetitions: number(2))
case "rss": measurePeakMemory(directory: argument(1), domains: number(2), mode: argument(3))
case "profile-refresh": profileRefresh(directory: argument(1), domains: number(2), iterations: number(3))
case "profile-evaluate": profileEvaluation(directory: argument(1), iterations: number(2))
case "evaluate": benchEvaluation(directory: argument(1), repetitions: number(2))
case "ed25519": benchStrictEd25519(cases: number(1))
case "log-append": benchLogAppend(repetitions: number(1))
case "audit": benchAudit(directory: argument(1), pinion: argument(2), versions: number(3), repetitions: number(4))
case "witness": benchWitness(directory: argument(1), requests: number(2), repetitions: number(3))
default: fail("usage: pinion-bench gen|history|refresh|rss|evaluate|ed25519|audit|witness|log-append ... (see bench/README.md)")
}
