# sourced by bench/run.sh
row "env, story node" "$B env --root $W/story --master-addr 198.21.3.5"
