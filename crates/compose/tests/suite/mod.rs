mod yaml;
