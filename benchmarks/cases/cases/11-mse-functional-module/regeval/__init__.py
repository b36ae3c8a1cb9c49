from .mse import MeanSquaredError
