// An alias that does not say `Result` hides the halves from the macro: the whole type is
// reported, with both halves' requirements.
use fence_runtime::fence_boundary;

#[derive(serde::Serialize)]
struct Forecast {
    sky: String,
}

type Outcome = Result<Forecast, std::io::Error>;

#[fence_boundary]
fn weather(city: &str) -> Outcome {
    Ok(Forecast { sky: city.to_owned() })
}

fn main() {}
