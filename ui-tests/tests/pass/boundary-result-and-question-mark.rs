use fence_runtime::fence_boundary;

#[fence_boundary]
fn parse_number(input: &str) -> Result<String, std::num::ParseIntError> {
    let n: u64 = input.parse()?;
    if n == 0 {
        return Ok("zero".into());
    }
    Ok(n.to_string())
}

#[fence_boundary]
fn read(path: &str) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

fn main() {
    assert!(!parse_number("0").is_error());
    assert!(parse_number("x").is_error());
    assert!(read("/no/such/path").is_error());
}
