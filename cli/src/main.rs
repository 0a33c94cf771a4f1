//! The `mcplens` binary: the command line of the `mcplens_cli` library (also what the Python and
//! Node packages' `mcplens` commands call).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(mcplens_cli::run(std::env::args_os()))
}
