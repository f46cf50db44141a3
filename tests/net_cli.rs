//! End-to-end tests of the network commands: `init-net` writes a checkpoint once, `eval-net`
//! reads it back (with or without extension) and prints a value and ranked moves whose
//! probabilities form a distribution, and `bench net` prints lines in the documented shape.

mod common;

use common::{camelot, temp_dir};

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

#[test]
fn init_net_then_eval_net_shows_value_and_a_move_distribution() {
    let dir = temp_dir("net-cli", "eval");
    let model = dir.join("models/000000");
    let model_arg = model.to_str().expect("utf-8 path");
    let out = camelot(&["init-net", "--variant", "cam", "--blocks", "1", "--channels", "8", "--out", model_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("cam 1x8 network"), "{}", text(&out.stdout));

    let again = camelot(&["init-net", "--variant", "cam", "--out", model_arg]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("already exists"), "{}", text(&again.stderr));

    for name in [model_arg.to_string(), format!("{model_arg}.safetensors")] {
        let out = camelot(&["eval-net", "--model", &name, "--top", "1000"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let value = stdout.lines().find(|l| l.starts_with("value for white")).expect("a value line");
        assert!(value.contains("win") && value.contains("draw") && value.contains("loss"), "{value}");
        let legal: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix("top moves (")?.split_whitespace().next()?.parse().ok())
            .expect("top moves (N legal):");
        let probabilities: Vec<f64> =
            stdout.lines().filter_map(|l| l.split('%').next()?.split_whitespace().nth(1)?.parse().ok()).collect();
        assert_eq!(probabilities.len(), legal, "{stdout}");
        let sum: f64 = probabilities.iter().sum();
        assert!((sum - 100.0).abs() < 0.5 + 0.05 * legal as f64, "move probabilities sum to {sum}");
        assert!(probabilities.windows(2).all(|w| w[0] >= w[1]), "ranked by probability");
    }

    let missing = camelot(&["eval-net", "--model", dir.join("nothing").to_str().expect("utf-8")]);
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("nothing.json: not found"), "{}", text(&missing.stderr));
}

#[test]
fn bench_net_lines_have_the_documented_shape() {
    let out = camelot(&[
        "bench",
        "net",
        "--variant",
        "camette",
        "--blocks",
        "1",
        "--channels",
        "8",
        "--batch",
        "1,4",
        "--seconds",
        "0.05",
        "--train-batch",
        "4",
        "--train-steps",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    for (batch, line) in [(1, lines[1]), (4, lines[2])] {
        let prefix = format!("batch {batch}: ");
        assert!(line.starts_with(&prefix) && line.contains(" positions/s, ") && line.ends_with(" GFLOP/s"), "{line}");
    }
    assert!(lines[3].starts_with("training (batch 4, gradients by hand): "), "{}", lines[3]);
    let last = lines.last().expect("a last line");
    assert!(last.starts_with("best: ") && (last.ends_with("at batch 1") || last.ends_with("at batch 4")), "{last}");
}
