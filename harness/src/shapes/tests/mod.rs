//! Tests of the shapes: the turn contract, size calibration, and each family's
//! character.

mod calibration;
mod contract;
mod families;

use super::{Conversation, Family, ShapeParams};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{case_seed, stream, Stream};
use compactsim_model::Message;

/// Root seed of the test cases.
const ROOT: u64 = 0x0005_EED5_4A9E;

/// The parameters and generator of case `case` of `family`.
fn case(family: Family, case: u32) -> (ShapeParams, Conversation) {
    let seed = case_seed(ROOT ^ family as u64, case);
    let params = ShapeParams::draw(family, &mut stream(seed, Stream::Params));
    let conversation = Conversation::new(params.clone(), stream(seed, Stream::Shape));
    (params, conversation)
}

/// A generated case: its system row and `turns` turns of rows.
struct Run {
    params: ShapeParams,
    system: Option<Message>,
    turns: Vec<Vec<Message>>,
}

fn run(family: Family, case_id: u32, turns: u32) -> Run {
    let (params, mut conversation) = case(family, case_id);
    let mut ids = IdAlloc::default();
    let system = conversation.system_prompt(&mut ids);
    let turns = (0..turns)
        .map(|t| conversation.next_turn(t, &mut ids))
        .collect();
    Run {
        params,
        system,
        turns,
    }
}
