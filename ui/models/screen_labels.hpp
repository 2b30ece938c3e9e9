#pragma once
// The engine's messages name config keys ("batch_size = 0 is not allowed: ..."), which is right
// for a config file and wrong under a control: the app shows them with the labels on screen
// ("Batch size b = 0 is not allowed: ...").
#include <QString>

#include "experiment/config/config.hpp"

namespace pipelens::ui {

// `message` with every config key in it replaced by its control's label: a key path with a dot
// or an index anywhere ("data.rows", "methods[1].step_size.grid"), a plain key where it names a
// value ("stages = 300", "seed is ..."). methods[i] becomes the method's title in the list of
// methods (`config` is the config the message is about). Other text is left as it is.
QString withScreenLabels(const QString& message, const ExperimentConfig& config);

}  // namespace pipelens::ui
